"""Default op names as TF1 gives them: the arithmetic operators name their op after the operator ("mul"), and an
op's Python-literal inputs are converted inside the op's own name scope ("mul/y", "Add/y", "strided_slice/stack").
Programs fetch tensors by these names (``sess.run("mul:0")``) and meta graphs carry them."""

import tensorweave as tf

# Produced with TF 2.21's compat.v1 (TF 1.15's graph building), from the same expressions.
TF1_OP_NAMES = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "sub_1",
                "mul_1", "truediv_1", "Less", "LessEqual", "Greater", "Neg", "Abs", "LogicalNot", "strided_slice",
                "strided_slice_1"]
TF1_LITERAL_INPUTS = {"add": "add/y:0", "sub": "sub/y:0", "mul": "mul/y:0", "truediv": "truediv/y:0",
                      "sub_1": "sub_1/x:0", "mul_1": "mul_1/x:0", "truediv_1": "truediv_1/x:0", "Less": "Less/y:0",
                      "strided_slice": "strided_slice/stack_1:0"}


def test_operators_and_their_literal_operands_take_tf1_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        b = tf.placeholder(tf.bool, [2], name="b")
        m = tf.placeholder(tf.float32, [2, 2], name="m")
        outs = [x + 1., x - 1., x * 2., x / 2., x // 2., x % 2., x ** 2., m @ m, b & b, b | b, b ^ b, 1. - x,
                2. * x, 3. / x, x < 1., x <= 1., x > 1., -x, abs(x), ~b, x[0], x[:1]]
        assert [o.op.name for o in outs] == TF1_OP_NAMES
        inputs = {o.op.name: [t.name for t in o.op.inputs] for o in outs}
        for op_name, literal in TF1_LITERAL_INPUTS.items():
            assert literal in inputs[op_name], (op_name, inputs[op_name])


def test_generated_op_wrappers_convert_literals_in_the_op_scope():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        z = tf.add(x, 3.0)
        named = tf.multiply(x, 2.0, name="double")
        assert z.op.inputs[1].name == "Add/y:0"
        assert named.op.name == "double" and named.op.inputs[1].name == "double/y:0"
        again = tf.multiply(x, 2.0, name="double")
        assert again.op.name == "double_1" and again.op.inputs[1].name == "double_1/y:0"
        tensors_only = tf.add(x, x)
        assert tensors_only.op.name == "Add_1"
