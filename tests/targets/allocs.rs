// allocs - a small Rust program whose allocations are made by the
// standard library on behalf of three user functions: format! (whose
// String grows through core::fmt), String::clone (<[u8]>::to_vec) and a
// Vec growing by push. copy_labels' copies are leaked on purpose. The
// heap views' default FoldPats should charge every byte to these
// functions (t5210 builds it with each rustc it finds; plain Rust that
// rustc 1.63 compiles too, and functions that are never inlined, so
// their results are made where they are named).
#[inline(never)]
fn make_labels(n: usize) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(format!("label-{}-{:>8}", i, i * 7));
    }
    v
}

#[inline(never)]
fn copy_labels(v: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(v.len());
    for s in v {
        out.push(s.clone());
    }
    out
}

#[inline(never)]
fn grow_numbers(n: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(i * 3);
    }
    v
}

fn main() {
    let labels = make_labels(1000);
    let copies = copy_labels(&labels);
    let numbers = grow_numbers(100000);
    std::mem::forget(copies);
    drop((labels, numbers));
}
