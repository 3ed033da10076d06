//! The command line's own files: JSON and text read and written with errors naming the file,
//! written atomically.

use std::path::Path;

use serde::Serialize;

use crate::{Error, Result};

pub use crate::files::read_json;

pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let json = serde_json::to_string_pretty(value).expect("reports serialize");
    write_text(path, &(json + "\n"))
}

/// Writes `text` to `path` atomically: a failed write leaves an existing file as it was.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    crate::files::write_atomically(path, |mut file| {
        use std::io::Write;
        file.write_all(text.as_bytes()).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// `data` as CSV text with a header: its features (a nominal one as its categories' names,
/// so that whoever reads the file, `replay --synth` among them, sees a nominal column;
/// empty where missing), then `label` (class names).
pub fn dataset_csv(data: &crate::core::Dataset) -> String {
    use std::fmt::Write;

    use crate::core::FeatureKind;

    let spec = data.spec();
    let names: Vec<&str> = spec.features.iter().map(|f| f.name.as_str()).collect();
    let mut out = format!("{},label\n", names.join(","));
    let classes = spec.classes.names();
    for i in 0..data.len() {
        for (v, feature) in data.row(i).iter().zip(&spec.features) {
            match &feature.kind {
                FeatureKind::Numeric => write!(out, "{v},"),
                FeatureKind::Nominal { categories } => {
                    let name = (*v >= 0.0).then(|| categories.get(*v as usize)).flatten();
                    write!(out, "{},", name.map_or("", String::as_str))
                }
            }
            .expect("a String takes any text");
        }
        let label = data.label(i).map_or("", |y| classes[y].as_str());
        writeln!(out, "{label}").expect("a String takes any text");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use arrow::datatypes::DataType;

    use super::dataset_csv;
    use crate::columnar::read_csv_bytes;
    use crate::synth::drift::DriftSpec;

    #[test]
    fn synth_nominal_attributes_are_written_by_name_and_read_back_nominal() {
        let data = "agrawal:rows=200".parse::<DriftSpec>().unwrap().generate();
        let csv = dataset_csv(&data);
        let header = csv.lines().next().unwrap();
        assert_eq!(
            header,
            "salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan,label"
        );
        let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        let x = data.row(0);
        assert_eq!(first[3], format!("level{}", x[3]));
        assert_eq!(first[4], format!("car{}", x[4] + 1.0));
        assert_eq!(first[5], format!("zipcode{}", x[5] + 1.0));
        assert!(first[9] == "groupA" || first[9] == "groupB");
        let table = read_csv_bytes(Path::new("agrawal"), csv.as_bytes()).unwrap();
        for (name, nominal) in [("age", false), ("elevel", true), ("car", true)] {
            let kind = table.schema.field_with_name(name).unwrap().data_type();
            assert_eq!(*kind == DataType::Utf8, nominal, "{name}: {kind}");
        }
    }
}
