//! The checkpoint reader on arbitrary bytes: an error, never a panic; a checkpoint that
//! loads gives a model that predicts. Built with `--cfg fuzzing`, the reader skips the
//! checksum comparison so that the fuzzer reaches the state decoder behind it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use streamboost::checkpoint;
use streamboost::learner::Classifier;

fuzz_target!(|bytes: &[u8]| {
    streamboost_fuzz::report_caught_panics();
    let path = streamboost_fuzz::scratch("checkpoint.parquet");
    std::fs::write(&path, bytes).unwrap();
    let _ = checkpoint::read_metadata(&path);
    if let Ok((model, stream)) = checkpoint::load(&path) {
        let row = vec![0.0; stream.spec.n_features()];
        let mut probs = vec![0.0; model.n_classes()];
        model.predict_proba(&row, &mut probs);
    }
});
