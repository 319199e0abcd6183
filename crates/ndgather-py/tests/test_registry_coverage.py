"""Every op of the core's registry is reachable from Python by its name, and each Python
function's parameters name the op's attributes: walks `_core.op_signatures()`, so an op
registered without a Python wrapper, or an attribute the wrapper cannot pass, fails here.
Run with `-s` to print the op x front end table."""
import ast
import inspect
import pathlib

import ndgather as ng

# Inputs the Python function takes under another shape: TensorFlow's SparseTensor for the
# three arrays of sp_ids, and its values for the weights.
TAKEN_AS = {"sp_ids_indices": "sp_ids", "sp_ids_values": "sp_ids",
            "sp_ids_dense_shape": "sp_ids", "sp_weights_values": "sp_weights",
            "sp_weights_indices": "sp_weights", "sp_weights_dense_shape": "sp_weights",
            "weight": "params"}
# Attributes a Python function spells its library's way.
SPELLED = {("embedding_bag", "bad_indices"): "bad_indices"}


def test_every_registered_op_has_a_python_function_taking_its_attributes() -> None:
    rows = []
    for name, _summary, inputs, attrs in ng._core.op_signatures():
        f = getattr(ng, name, None)
        assert f is not None, f"ndgather has no function {name} for the registered op"
        params = inspect.signature(f).parameters
        for attr, _kind, _default, _optional in attrs:
            assert SPELLED.get((name, attr), attr) in params, f"{name} lacks attribute {attr}"
        for input_name, _kind in inputs:
            assert TAKEN_AS.get(input_name, input_name) in params, f"{name} lacks {input_name}"
        rows.append(f"| {name} | ng.{name} |")
    print("\n| op | Python |\n|---|---|\n" + "\n".join(rows))
    assert len(rows) >= 26


def test_the_stub_declares_every_binding_with_its_parameters() -> None:
    """`_core.pyi` names each function of the extension with the parameters it takes, and
    nothing it lacks: a binding added, renamed or given another parameter fails here."""
    import ndgather._core as core
    stub = ast.parse((pathlib.Path(ng.__file__).parent / "_core.pyi").read_text())
    declared = {f.name: [a.arg for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs]
                for f in stub.body if isinstance(f, ast.FunctionDef)}
    bound = {name: list(inspect.signature(f).parameters) for name, f in vars(core).items()
             if callable(f) and not isinstance(f, type) and not name.startswith("__")}
    assert "run_op" in bound and len(bound) >= 10
    assert declared == bound
