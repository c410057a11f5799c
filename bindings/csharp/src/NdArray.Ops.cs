namespace Nnrt
{
    // Named array math: each method is one nnrt_op call on this array's context, with the op's
    // attributes as parameters. Context.Op reaches every op, including ones added later.
    public sealed partial class NdArray
    {
        private NdArray Unary(string op, string attrs = null) { return Context.Op(op, attrs, this); }
        private NdArray Binary(string op, NdArray other) { return Context.Op(op, null, this, other); }

        /// <summary>Elementwise a + b, broadcasting like numpy (both of one dtype).</summary>
        public static NdArray operator +(NdArray a, NdArray b) { return a.Binary("add", b); }
        /// <summary>Elementwise a - b, broadcasting.</summary>
        public static NdArray operator -(NdArray a, NdArray b) { return a.Binary("sub", b); }
        /// <summary>Elementwise a * b, broadcasting.</summary>
        public static NdArray operator *(NdArray a, NdArray b) { return a.Binary("mul", b); }
        /// <summary>Elementwise a / b, broadcasting.</summary>
        public static NdArray operator /(NdArray a, NdArray b) { return a.Binary("div", b); }
        /// <summary>Elementwise -a.</summary>
        public static NdArray operator -(NdArray a) { return a.Unary("neg"); }

        /// <summary>Elementwise sum (op "add").</summary>
        public NdArray Add(NdArray other) { return Binary("add", other); }
        /// <summary>Elementwise difference (op "sub").</summary>
        public NdArray Sub(NdArray other) { return Binary("sub", other); }
        /// <summary>Elementwise product (op "mul").</summary>
        public NdArray Mul(NdArray other) { return Binary("mul", other); }
        /// <summary>Elementwise quotient (op "div").</summary>
        public NdArray Div(NdArray other) { return Binary("div", other); }
        /// <summary>Elementwise maximum.</summary>
        public NdArray Maximum(NdArray other) { return Binary("maximum", other); }
        /// <summary>Elementwise minimum.</summary>
        public NdArray Minimum(NdArray other) { return Binary("minimum", other); }

        /// <summary>Elementwise negation.</summary>
        public NdArray Neg() { return Unary("neg"); }
        /// <summary>Elementwise absolute value.</summary>
        public NdArray Abs() { return Unary("abs"); }
        /// <summary>Elementwise e^x.</summary>
        public NdArray Exp() { return Unary("exp"); }
        /// <summary>Elementwise natural logarithm.</summary>
        public NdArray Log() { return Unary("log"); }
        /// <summary>Elementwise square root.</summary>
        public NdArray Sqrt() { return Unary("sqrt"); }
        /// <summary>Elementwise max(x, 0).</summary>
        public NdArray Relu() { return Unary("relu"); }
        /// <summary>Elementwise logistic function.</summary>
        public NdArray Sigmoid() { return Unary("sigmoid"); }
        /// <summary>Elementwise hyperbolic tangent.</summary>
        public NdArray Tanh() { return Unary("tanh"); }
        /// <summary>Elementwise GELU (exact, erf-based).</summary>
        public NdArray Gelu() { return Unary("gelu"); }
        /// <summary>Elementwise leaky ReLU with slope alpha below 0.</summary>
        public NdArray LeakyRelu(double alpha = 0.01) { return Unary("leaky_relu", new JsonObject().Add("alpha", alpha).ToString()); }
        /// <summary>Elementwise ELU.</summary>
        public NdArray Elu(double alpha = 1.0) { return Unary("elu", new JsonObject().Add("alpha", alpha).ToString()); }

        /// <summary>Matrix product (rank >= 2; batch dimensions broadcast like numpy's matmul).</summary>
        public NdArray MatMul(NdArray other, bool transposeA = false, bool transposeB = false)
        {
            var attrs = new JsonObject().Add("transpose_a", transposeA).Add("transpose_b", transposeB);
            return Context.Op("matmul", attrs.ToString(), this, other);
        }

        private NdArray Reduce(string op, long[] axes, bool keepDims)
        {
            var attrs = new JsonObject().Add("keepdims", keepDims);
            if (axes != null) attrs.Add("axes", axes);
            return Unary(op, attrs.ToString());
        }

        /// <summary>Sum over axes (null: all; negative counts from the end).</summary>
        public NdArray Sum(long[] axes = null, bool keepDims = false) { return Reduce("sum", axes, keepDims); }
        /// <summary>Mean over axes (null: all).</summary>
        public NdArray Mean(long[] axes = null, bool keepDims = false) { return Reduce("mean", axes, keepDims); }
        /// <summary>Maximum over axes (null: all).</summary>
        public NdArray Max(long[] axes = null, bool keepDims = false) { return Reduce("max", axes, keepDims); }
        /// <summary>Minimum over axes (null: all).</summary>
        public NdArray Min(long[] axes = null, bool keepDims = false) { return Reduce("min", axes, keepDims); }
        /// <summary>Index of the largest element along one axis, as I64.</summary>
        public NdArray ArgMax(long axis = -1, bool keepDims = false)
        {
            return Unary("argmax", new JsonObject().Add("axis", axis).Add("keepdims", keepDims).ToString());
        }

        /// <summary>Softmax along one axis.</summary>
        public NdArray Softmax(long axis = -1) { return Unary("softmax", new JsonObject().Add("axis", axis).ToString()); }
        /// <summary>Log-softmax along one axis.</summary>
        public NdArray LogSoftmax(long axis = -1) { return Unary("log_softmax", new JsonObject().Add("axis", axis).ToString()); }

        /// <summary>Converts to another dtype: floats to f16/bf16 round to nearest even, floats to
        /// integers truncate toward zero.</summary>
        public NdArray Cast(DType dtype) { return Unary("cast", new JsonObject().Add("dtype", DTypes.JsonName(dtype)).ToString()); }
        /// <summary>The same elements in a new shape; one dimension may be -1.</summary>
        public NdArray Reshape(params long[] shape) { return Unary("reshape", new JsonObject().Add("shape", shape).ToString()); }
        /// <summary>Permutes the dimensions (no perm: reversed).</summary>
        public NdArray Transpose(params long[] perm)
        {
            return Unary("transpose", perm.Length == 0 ? null : new JsonObject().Add("perm", perm).ToString());
        }

        /// <summary>2-D convolution, NCHW: this is x [N,C,H,W], weight [O,C/groups,kh,kw], bias [O] or
        /// null. stride, padding and dilation are [h, w] (null: the op's defaults).</summary>
        public NdArray Conv2d(NdArray weight, NdArray bias = null, long[] stride = null, long[] padding = null,
                              long[] dilation = null, long groups = 1)
        {
            var attrs = new JsonObject().Add("groups", groups);
            if (stride != null) attrs.Add("stride", stride);
            if (padding != null) attrs.Add("padding", padding);
            if (dilation != null) attrs.Add("dilation", dilation);
            return bias == null ? Context.Op("conv2d", attrs.ToString(), this, weight)
                                : Context.Op("conv2d", attrs.ToString(), this, weight, bias);
        }

        private NdArray Pool(string op, long[] kernel, long[] stride, long[] padding)
        {
            var attrs = new JsonObject().Add("kernel", kernel);
            if (stride != null) attrs.Add("stride", stride);
            if (padding != null) attrs.Add("padding", padding);
            return Unary(op, attrs.ToString());
        }

        /// <summary>2-D max pooling, NCHW; stride defaults to the kernel.</summary>
        public NdArray MaxPool2d(long[] kernel, long[] stride = null, long[] padding = null) { return Pool("maxpool2d", kernel, stride, padding); }
        /// <summary>2-D average pooling, NCHW; stride defaults to the kernel.</summary>
        public NdArray AvgPool2d(long[] kernel, long[] stride = null, long[] padding = null) { return Pool("avgpool2d", kernel, stride, padding); }
    }
}
