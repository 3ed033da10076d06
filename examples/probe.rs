use streamboost::columnar::load_stream;
use streamboost::prelude::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = load_stream(&[args[1].clone().into()], "label", &[]).unwrap();
    let mut order: Vec<usize> = (0..data.len()).collect();
    Rng::new(1).shuffle(&mut order);
    for seed in 0..5u64 {
        let mut cfg = HoeffdingTreeConfig::jgt_paper();
        if args.len() > 2 {
            cfg.merit_preprune = false;
        }
        let mut t = cfg.build(data.spec(), seed).unwrap();
        let mut correct = 0;
        let mut p = vec![0.0; data.spec().n_classes()];
        let n = data.len();
        let mut fin = 0;
        for (pos, &i) in order.iter().enumerate() {
            let y = data.label(i).unwrap();
            if t.learn_predict(data.row(i), Some(y), 1.0, &mut p) == y {
                correct += 1;
                if pos >= n * 8 / 10 {
                    fin += 1;
                }
            }
        }
        let pr = t.params();
        println!(
            "grace {:.1} delta {:.3} tau {:.3}: acc {:.3} final {:.3} nodes {} leaves {} active {} depth {}",
            pr.grace_period,
            pr.split_confidence,
            pr.tie_threshold,
            correct as f64 / n as f64,
            fin as f64 / (n - n * 8 / 10) as f64,
            t.n_nodes(),
            t.n_leaves(),
            t.n_active_leaves(),
            t.depth()
        );
    }
}
