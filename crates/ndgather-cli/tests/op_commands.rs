//! Every op of the core's registry is a subcommand of the binary, with its arguments from the
//! op's signature: `--help` for each, and a run of the ops the hand-written subcommands lack.

use crate::common;

use common::bin;
use predicates::prelude::*;

#[test]
fn every_registered_op_is_a_subcommand_with_help() {
    for op in ndgather::registry::ops() {
        let name = ndgather_cli::op_commands::command_name(op.name());
        let assert = bin().args([name.as_str(), "--help"]).assert().success();
        let help = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
        let hand_written = ["gather", "gather-nd", "take-along-axis", "embedding-lookup"];
        if !hand_written.contains(&name.as_str()) {
            assert!(help.starts_with(op.summary()), "{name} --help:\n{help}");
        }
        for attr in op.signature().attrs {
            // The hand-written gathers take the fill value inside their policy flag.
            let flag = match attr.name {
                "fill_value" => "fill[=VALUE]".to_string(),
                other => format!("--{}", ndgather_cli::op_commands::command_name(other)),
            };
            assert!(help.contains(&flag), "{name} --help lacks {flag}:\n{help}");
        }
    }
}

#[test]
fn segment_reductions_from_the_command_line() {
    bin()
        .args([
            "unsorted-segment-max",
            "--data",
            "[1.0, 5.0, 2.0]",
            "--segment-ids",
            "[0, 0, 2]",
            "--num-segments",
            "3",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "[ 5.0000000e+00 -3.4028235e+38  2.0000000e+00]",
        ));
    bin()
        .args(["segment-sum", "--data", "[[1, 2], [3, 4], [5, 6]]"])
        .args(["--segment-ids", "[0, 0, 2]"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[[4 6]\n [0 0]\n [5 6]]"));
    bin()
        .args(["segment-sum", "--data", "[1, 2]", "--segment-ids", "[1, 0]"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("segment ids are not increasing"));
    bin()
        .args([
            "unsorted-segment-sum",
            "--data",
            "[1, 2]",
            "--segment-ids",
            "[1, 0]",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--num-segments"));
    bin()
        .args([
            "unsorted-segment-sum",
            "--data",
            "[1, 2]",
            "--segment-ids",
            "[1, 0]",
        ])
        .args(["--num-segments", "two"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--num-segments takes an integer, got 'two'",
        ));
}

#[test]
fn write_ops_and_embedding_bag_from_the_command_line() {
    bin()
        .args(["tensor-scatter-nd-add", "--tensor", "[1, 2, 3]"])
        .args(["--indices", "[[0], [2], [0]]", "--updates", "[10, 20, 30]"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[41  2 23]"));
    bin()
        .args([
            "scatter-reduce",
            "--input",
            "[1.0, 2.0]",
            "--index",
            "[0, 0, 1]",
        ])
        .args(["--src", "[5.0, 7.0, 1.0]", "--dim", "0", "--reduce", "amax"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[7. 2.]"));
    bin()
        .args([
            "scatter-reduce",
            "--input",
            "[1.0]",
            "--index",
            "[0]",
            "--src",
            "[1.0]",
        ])
        .args(["--dim", "0", "--reduce", "median"])
        .assert()
        .failure()
        // The op's own check, in PyTorch's words.
        .stderr(predicate::str::contains(
            "reduce argument must be either sum, prod, mean, amax or amin, got median",
        ));
    bin()
        .args(["embedding-bag", "--weight", "[[1.0, 2.0], [3.0, 4.0]]"])
        .args(["--input", "[[0, 1]]", "--mode", "sum"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[[4. 6.]]"));
    bin()
        .args(["gather-segment", "--x", "[[1.0], [2.0], [3.0]]"])
        .args([
            "--src",
            "[0, 2, 1]",
            "--dst",
            "[1, 1, 0]",
            "--num-segments",
            "2",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("[[2.]\n [4.]]"));
    // A gradient op: its params' shape is an attribute, as a list.
    bin()
        .args(["gather-grad", "--params-shape", "2,3", "--axis", "1"])
        .args([
            "--indices",
            "[2, 2, 0]",
            "--grad",
            "[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("[[1. 0. 2.]\n [1. 0. 2.]]"));
}

/// A gradient per shard: printed by name, and written as a `.npz` of them (one `.npy` is
/// refused).
#[test]
fn a_result_of_several_arrays_prints_and_saves_each() {
    let lookup = [
        "embedding-lookup-grad",
        "--params",
        "[[0.0], [0.0]]",
        "--params",
        "[[0.0]]",
        "--ids",
        "[2, 1, 2]",
        "--grad",
        "[[1.0], [2.0], [3.0]]",
    ];
    bin()
        .args(lookup)
        .assert()
        .success()
        .stdout(predicate::str::contains("indices_0:\n[1 1]"))
        .stdout(predicate::str::contains("values_1:\n[[2.]]"))
        .stdout(predicate::str::contains("dense_shape_1:\n[1 1]"));
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("g.npy");
    bin()
        .args(lookup)
        .arg("-o")
        .arg(&npy)
        .assert()
        .failure()
        .stderr(predicate::str::contains("write it to a .npz"));
    let npz = dir.path().join("g.npz");
    bin().args(lookup).arg("-o").arg(&npz).assert().success();
    let names = ndgather_cli::archive::npz_names(&npz).unwrap();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.contains(&"values_0".to_string()), "{names:?}");
}
