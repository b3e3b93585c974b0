//! Scenario links: the length of each built-in scenario's link against
//! lz-string's `compressToEncodedURIComponent` of the same scenario JSON
//! (printed as a table, one run), and the time to encode, to decode, and to
//! decode and build the session's first view (`Playground::load`) for the
//! largest built-in scenario (budget: 50 ms).

#[path = "support/allocator.rs"]
mod allocator;

#[path = "../tests/share_lzstring.rs"]
mod lzstring;

use criterion::{Criterion, criterion_group};
use nomad_playground::playground::Playground;
use nomad_playground::scenario::{self, format::Scenario};
use nomad_playground::share::{Link, decode_link, encode_fragment, encode_link};
use std::hint::black_box;
use std::path::Path;

fn builtin() -> Vec<(String, Scenario)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let s = scenario::parse(&text).ok()?;
            Some((p.file_name()?.to_string_lossy().into_owned(), s))
        })
        .collect()
}

fn ratios(all: &[(String, Scenario)]) {
    println!(
        "\n{:<44} {:>6} {:>6} {:>6} {:>6}",
        "scenario", "json", "lz", "link", "ratio"
    );
    let mut worst: f64 = 0.0;
    for (name, s) in all {
        let json = serde_json::to_string(s).unwrap_or_default();
        let lz = lzstring::compress_to_encoded_uri_component(&json).len();
        let ours = encode_fragment(&Link::new(s.clone())).len();
        let ratio = ours as f64 / lz as f64;
        worst = worst.max(ratio);
        println!(
            "{name:<44} {:>6} {lz:>6} {ours:>6} {ratio:>6.3}",
            json.len()
        );
    }
    println!("worst ratio {worst:.3} (budget 0.5)\n");
}

fn bench(c: &mut Criterion) {
    let all = builtin();
    ratios(&all);
    let Some((name, largest)) = all
        .iter()
        .max_by_key(|(_, s)| serde_json::to_string(s).map(|j| j.len()).unwrap_or(0))
        .cloned()
    else {
        return;
    };
    let link = encode_link("http://127.0.0.1:8080/", &Link::new(largest.clone()));
    c.bench_function(&format!("encode {name}"), |b| {
        b.iter(|| encode_fragment(black_box(&Link::new(largest.clone()))))
    });
    c.bench_function(&format!("decode {name}"), |b| {
        b.iter(|| decode_link(black_box(&link)))
    });
    c.bench_function(&format!("decode+load {name}"), |b| {
        b.iter(|| {
            let opened = decode_link(black_box(&link)).ok()?;
            let json = scenario::print(&opened.scenario);
            Playground::load(&json, opened.profile.as_deref()).ok()
        })
    });
}

criterion_group!(benches, bench);

fn main() {
    allocator::configure();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
