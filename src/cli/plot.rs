//! Learning-curve charts: `replay --plot PATH.svg|png` and `streamboost plot REPORT.json …
//! -o PATH.svg|png`. The prequential metric after each window of rows, windowed and cumulative, one
//! colour per run, with the start of the final fraction marked. Public for the Python
//! package's `progressive_val_score(plot=…)`, which draws the same chart.

use std::path::{Path, PathBuf};

use clap::Args;
use plotters::prelude::*;

use crate::eval::Prequential;
use crate::{Error, Result};

/// One run's curve: `(rows, cumulative, window)` per point.
pub struct Curve {
    /// Its name in the legend.
    pub name: String,
    /// The points.
    pub points: Vec<(u64, Option<f64>, Option<f64>)>,
    /// The first row of the final fraction, if there is one.
    pub final_from: Option<u64>,
    /// Rows where a learner was replaced after a drift (drawn as ticks at the bottom).
    pub replaced_at: Vec<u64>,
}

/// The image formats charts are written in, by the path's extension.
#[derive(Clone, Copy)]
enum Image {
    Svg,
    Png,
}

/// The format of a chart path; anything but `.svg` and `.png` is refused before any work.
fn image_of(path: &Path) -> Result<Image> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Image::Svg),
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(Image::Png),
        _ => Err(Error::config(
            "plot",
            format!("{}: charts are written as `.svg` or `.png`", path.display()),
        )),
    }
}

/// Refuses a chart path of a format charts are not written in, before any work is done.
pub fn check_path(path: &Path) -> Result<()> {
    image_of(path).map(|_| ())
}

const SIZE: (u32, u32) = (960, 540);

/// Draws `curves` against `axes` (the x and y descriptions: `rows` and `accuracy` or `rank
/// loss` for a learning curve) into `path` (SVG or PNG).
pub fn draw(path: &Path, title: &str, axes: (&str, &str), curves: &[Curve]) -> Result<()> {
    let image = image_of(path)?;
    // Text is measured and drawn with fonts registered here, not the system's.
    static FONT: std::sync::Once = std::sync::Once::new();
    FONT.call_once(|| {
        let font = dejavu::sans::regular();
        let registered = plotters::style::register_font("sans-serif", FontStyle::Normal, font);
        assert!(registered.is_ok(), "DejaVu Sans is a valid font");
    });
    // Drawn beside the path under a temporary name that keeps the extension (the bitmap
    // encoder reads the format from it), then renamed over it: a failed chart leaves an
    // existing file as it was.
    let mut partial = crate::files::partial_path(path).into_os_string();
    partial.push(if matches!(image, Image::Svg) {
        ".svg"
    } else {
        ".png"
    });
    let partial = PathBuf::from(partial);
    let drawn = match image {
        Image::Svg => draw_on(SVGBackend::new(&partial, SIZE), title, axes, curves),
        Image::Png => draw_on(BitMapBackend::new(&partial, SIZE), title, axes, curves),
    };
    let drawn = drawn
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|()| std::fs::File::open(&partial));
    match drawn {
        Ok(file) => crate::files::put_in_place(&partial, &file, path),
        Err(source) => {
            let _ = std::fs::remove_file(&partial);
            Err(Error::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    }
}

fn draw_on<B: DrawingBackend>(
    backend: B, title: &str, (x_desc, y_desc): (&str, &str), curves: &[Curve],
) -> std::result::Result<(), Box<dyn std::error::Error>>
where
    B::ErrorType: 'static,
{
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let rows = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .max()
        .unwrap_or(1)
        .max(1);
    let values = curves
        .iter()
        .flat_map(|c| c.points.iter().flat_map(|p| [p.1, p.2]))
        .flatten();
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() {
        let pad = ((hi - lo) * 0.05).max(0.01);
        ((lo - pad).max(0.0), hi + pad)
    } else {
        (0.0, 1.0)
    };
    let windows = curves
        .iter()
        .any(|c| c.points.iter().any(|p| p.2.is_some()));
    let caption = match windows {
        true => format!("{title} (thick: cumulative, thin: per window)"),
        false => title.to_string(),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(0u64..rows, lo..hi)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(BLACK.mix(0.05))
        .draw()?;
    // Distinct, dark enough on white (matplotlib's tab10).
    const COLOURS: [(u8, u8, u8); 8] = [
        (31, 119, 180),
        (214, 39, 40),
        (44, 160, 44),
        (148, 103, 189),
        (255, 127, 14),
        (23, 190, 207),
        (140, 86, 75),
        (227, 119, 194),
    ];
    // Where each curve's final fraction starts: one grey line where all curves share it,
    // else one in each curve's colour (reports of streams of different lengths).
    let mut starts: Vec<u64> = curves.iter().filter_map(|c| c.final_from).collect();
    starts.dedup();
    let shared = starts.len() == 1 && curves.iter().all(|c| c.final_from == Some(starts[0]));
    for (i, curve) in curves.iter().enumerate() {
        let Some(from) = curve.final_from else {
            continue;
        };
        if shared && i > 0 {
            break;
        }
        let (r, g, b) = COLOURS[i % COLOURS.len()];
        let colour = match shared {
            true => BLACK.mix(0.5),
            false => RGBColor(r, g, b).mix(0.7),
        };
        let label = match shared {
            true => "the final fraction starts".to_string(),
            false => format!("{}: the final fraction starts", curve.name),
        };
        chart
            .draw_series(DashedLineSeries::new(
                [(from, lo), (from, hi)],
                6,
                4,
                colour.stroke_width(1),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour));
    }
    // Each replacement of a learner: a tick in the curve's colour, rising from the bottom.
    for (i, curve) in curves.iter().enumerate() {
        if curve.replaced_at.is_empty() {
            continue;
        }
        let (r, g, b) = COLOURS[i % COLOURS.len()];
        let colour = RGBColor(r, g, b).mix(0.6);
        let tick = (hi - lo) * 0.04;
        let ticks = curve.replaced_at.iter().map(|&row| {
            PathElement::new(vec![(row, lo), (row, lo + tick)], colour.stroke_width(1))
        });
        chart
            .draw_series(ticks)?
            .label(format!("{}: a learner replaced", curve.name))
            .legend(move |(x, y)| PathElement::new(vec![(x + 12, y - 5), (x + 12, y + 5)], colour));
    }
    for (i, curve) in curves.iter().enumerate() {
        let (r, g, b) = COLOURS[i % COLOURS.len()];
        let colour = RGBColor(r, g, b).to_rgba();
        let window = curve
            .points
            .iter()
            .filter_map(|&(r, _, w)| w.map(|w| (r, w)));
        chart.draw_series(LineSeries::new(window, colour.mix(0.4).stroke_width(1)))?;
        let cumulative = curve
            .points
            .iter()
            .filter_map(|&(r, c, _)| c.map(|c| (r, c)));
        chart
            .draw_series(LineSeries::new(cumulative, colour.stroke_width(3)))?
            .label(curve.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .position(emptiest_corner(curves, rows, (lo, hi)))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;
    Ok(())
}

/// The corner of the plot where the legend covers the fewest points of the curves: the
/// share of each corner's box (40% of the width, 30% of the height) that they cross.
fn emptiest_corner(curves: &[Curve], rows: u64, (lo, hi): (f64, f64)) -> SeriesLabelPosition {
    let points = || {
        curves.iter().flat_map(|c| {
            c.points.iter().flat_map(|&(r, cumulative, window)| {
                let x = r as f64 / rows as f64;
                [cumulative, window]
                    .into_iter()
                    .flatten()
                    .map(move |v| (x, (v - lo) / (hi - lo)))
            })
        })
    };
    // (right, upper), in the order ties are settled.
    let corners = [(true, false), (true, true), (false, false), (false, true)];
    let covered = |&(right, upper): &(bool, bool)| {
        points()
            .filter(|&(x, y)| {
                let across = if right { x >= 0.6 } else { x <= 0.4 };
                let up = if upper { y >= 0.7 } else { y <= 0.3 };
                across && up
            })
            .count()
    };
    match corners.iter().min_by_key(|c| covered(c)) {
        Some((true, true)) => SeriesLabelPosition::UpperRight,
        Some((false, false)) => SeriesLabelPosition::LowerLeft,
        Some((false, true)) => SeriesLabelPosition::UpperLeft,
        _ => SeriesLabelPosition::LowerRight,
    }
}

/// `streamboost plot`: the learning curves of several `replay --report` files on one chart.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Reports written by `replay --report`.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// The chart to write (SVG or PNG, by extension).
    #[arg(short, long, value_name = "PATH.svg|png")]
    pub output: PathBuf,
}

/// Runs `streamboost plot`.
pub fn run(args: &PlotArgs) -> Result<()> {
    check_path(&args.output)?;
    let reports: Vec<_> = (args.reports.iter())
        .map(|p| crate::files::Named::new("REPORT", p))
        .collect();
    let chart = crate::files::Named::new("--output", &args.output);
    crate::files::refuse_overlaps(&reports, &[chart])?;
    let mut metric = None;
    let mut curves = Vec::new();
    for path in &args.reports {
        let (name, this, curve) = read_report(path)?;
        if metric.is_some_and(|m| m != this) {
            return Err(Error::Format {
                file: path.clone(),
                message: format!("a report of {this} among reports of {}", metric.unwrap()),
            });
        }
        metric = Some(this);
        curves.push(Curve { name, ..curve });
    }
    let metric = metric.expect("at least one report");
    draw(
        &args.output,
        &format!("prequential {metric}"),
        ("rows", metric),
        &curves,
    )
}

/// A report's name (its file's stem and algorithm), metric and curve.
fn read_report(path: &Path) -> Result<(String, &'static str, Curve)> {
    let format = |message: String| Error::Format {
        file: path.to_path_buf(),
        message,
    };
    let report = super::files::read_json(path)?;
    let curve = report["curve"]
        .as_array()
        .ok_or_else(|| format("no `curve` in it: not a `replay --report` file".into()))?;
    let metric = if curve
        .first()
        .is_some_and(|p| p.get("cumulative_rank_loss").is_some())
    {
        "rank loss"
    } else {
        "accuracy"
    };
    let key = metric.replace(' ', "_");
    let points = curve
        .iter()
        .map(|p| {
            (
                p["rows"].as_u64().unwrap_or(0),
                p[format!("cumulative_{key}")].as_f64(),
                p[format!("window_{key}")].as_f64(),
            )
        })
        .collect();
    let rows = report["rows"].as_u64().unwrap_or(0);
    let fraction = report["final_fraction"]["fraction"]
        .as_f64()
        .or_else(|| report["final_fraction"].as_f64());
    let final_from = fraction.map(|final_fraction| {
        let evaluation = Prequential {
            final_fraction,
            ..Prequential::default()
        };
        evaluation.first_final(rows as usize) as u64
    });
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match report["algorithm"].as_str() {
        Some(a) => format!("{stem}: {a}"),
        None => stem,
    };
    Ok((
        name.clone(),
        metric,
        Curve {
            name,
            points,
            final_from,
            replaced_at: report["drift"]["events"]
                .as_array()
                .map_or(Vec::new(), |events| {
                    events.iter().filter_map(|e| e["row"].as_u64()).collect()
                }),
        },
    ))
}
