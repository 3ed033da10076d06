#!/usr/bin/env python3
"""Memory over a long generated stream, with and without a memory limit per tree.

Each model replays one generated stream (`--synth SPEC`, no file); the script samples the
process's resident memory (`VmRSS`) every `--every` seconds and reports it at each tenth of
the run's wall time, beside the peak, the CPU-seconds (user + system, from `wait4`) and the
report's accuracy (whole stream and final 20%). Models run one at a time, so that they do not
share the cores.

    cargo build --release
    python3 benchmarks/tree_memory.py [--synth led:rows=200000] \
        [--models "ada-olm" "ada-olm, 256 KiB trees"]
"""
import argparse, json, os, subprocess, tempfile, time

MODELS = {
    "default": [],
    "default, 256 KiB trees": ["--tree-memory-limit", "256KiB"],
    "ada-olm": ["--algo", "ada-olm"],
    "ada-olm, 256 KiB trees": ["--algo", "ada-olm", "--tree-memory-limit", "256KiB"],
}


def rss_bytes(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except FileNotFoundError:
        pass
    return None


def run(binary, synth, flags, every):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        start = time.monotonic()
        child = subprocess.Popen([binary, "replay", "-q", "--synth", synth, "--report", report,
                                  *flags], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        samples = []
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            rss = rss_bytes(child.pid)
            if rss is not None:
                samples.append((time.monotonic() - start, rss))
            time.sleep(every)
        if status != 0:
            raise RuntimeError(child.stderr.read().decode())
        r = json.load(open(report))
    wall = time.monotonic() - start
    tenths = [max([rss for t, rss in samples if t <= wall * i / 10] or [0]) for i in range(1, 11)]
    return {"whole": r["cumulative"]["accuracy"], "final": r["final_fraction"]["accuracy"],
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024, "rss_by_tenth": tenths}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/streamboost")
    ap.add_argument("--synth", default="led:rows=200000")
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--every", type=float, default=1.0)
    args = ap.parse_args()
    print(f"`--synth {args.synth}`; resident memory (MB) at each tenth of the run (the "
          "largest sample so far)\n")
    print("| model | whole stream | final 20% | CPU-seconds | peak RSS (MB) | "
          "RSS at 10%, 20%, …, 100% of the run (MB) |")
    print("|---|---|---|---|---|---|")
    for name in args.models:
        r = run(args.binary, args.synth, MODELS[name], args.every)
        curve = ", ".join(f"{b / 2**20:,.0f}" for b in r["rss_by_tenth"])
        print(f"| {name} | {r['whole']:.4f} | {r['final']:.4f} | {r['cpu_seconds']:,.1f} | "
              f"{r['peak_rss_bytes'] / 2**20:,.0f} | {curve} |", flush=True)


if __name__ == "__main__":
    main()
