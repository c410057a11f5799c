using System;

namespace Nnrt
{
    /// <summary>A network built from a JSON config, with its parameters (nnrt_model). Safe to share
    /// between threads: Predict may run on several threads at once, also while a trainer trains it.
    /// A trainer keeps its model alive, so disposing the model first is fine.</summary>
    public sealed class Model : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public ModelHandle Handle { get; private set; }

        /// <summary>The context the model was built on; arrays it returns belong to it.</summary>
        public Context Context { get; private set; }

        private Model(Context context, ModelHandle handle)
        {
            Context = context;
            Handle = handle;
        }

        /// <summary>Builds a model from a JSON config: "input" (one example's shape), optional "seed",
        /// and "layers" (a sequence) or "nodes" + "outputs" (a graph), as nnrt.h describes at
        /// nnrt_model_create.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a bad config (the message names the layer
        /// and key); Shape when a layer's input does not fit it.</exception>
        public Model(Context context, string configJson)
        {
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_create(context.Handle, Utf8.Encode(configJson), out handle));
            Context = context;
            Handle = handle;
        }

        /// <summary>Loads a model saved by <see cref="Save"/> or <see cref="Trainer.Save"/> onto context.</summary>
        /// <exception cref="NnrtException">Io, Corrupt (the message says what is wrong) or Version.</exception>
        public static Model Load(Context context, string path)
        {
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_load(context.Handle, Utf8.Encode(path), out handle));
            return new Model(context, handle);
        }

        /// <summary>Imports an ONNX model (a .onnx file, opsets 7 to 17) as an nnrt graph model. optionsJson
        /// is null for the defaults or a JSON object with "batch" (true: ONNX dim 0 is the batch),
        /// "batch_axis" (another ONNX dim that is, e.g. 1 for a time-major [T, N, F] input), "input"
        /// (the example shape, for symbolic dims) and "loss" (the final Gemm becomes an output layer, so
        /// that the model trains).</summary>
        /// <exception cref="NnrtException">Unsupported naming the node, op type and opset; Corrupt for a
        /// malformed file; Io when it cannot be opened.</exception>
        public static Model ImportOnnx(Context context, string path, string optionsJson = null)
        {
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_import_onnx(context.Handle, Utf8.Encode(path),
                                                   optionsJson == null ? null : Utf8.Encode(optionsJson), out handle));
            return new Model(context, handle);
        }

        /// <summary>As <see cref="ImportOnnx(Context, string, string)"/>, from the contents of a .onnx file
        /// (nnrt keeps no reference to them).</summary>
        /// <exception cref="NnrtException">As ImportOnnx; Unsupported also for tensors with external data,
        /// which need the model's folder.</exception>
        public static Model ImportOnnxBytes(Context context, byte[] onnx, string optionsJson = null)
        {
            if (onnx == null) throw new ArgumentNullException("onnx");
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_import_onnx_memory(context.Handle, onnx, (UIntPtr)onnx.Length,
                                                          optionsJson == null ? null : Utf8.Encode(optionsJson),
                                                          out handle));
            return new Model(context, handle);
        }

        /// <summary>Writes the model as ONNX (opset 17, parameters as initializers, a symbolic batch
        /// dim), atomically.</summary>
        /// <exception cref="NnrtException">Unsupported for a layer with no ONNX form here (lstm); Io.</exception>
        public void ExportOnnx(string path) { Check.Ok(Native.nnrt_model_export_onnx(Handle, Utf8.Encode(path))); }

        /// <summary>Saves config and parameters as one safetensors file, atomically.</summary>
        public void Save(string path) { Check.Ok(Native.nnrt_model_save(Handle, Utf8.Encode(path))); }

        /// <summary>Runs the model on a batch [N, input shape...] and returns the first output as a new F32
        /// array [N, output shape...] (for an output layer: its activation, e.g. class probabilities).</summary>
        public NdArray Predict(NdArray input)
        {
            ArrayHandle output;
            Check.Ok(Native.nnrt_model_predict(Handle, input.Handle, out output));
            return new NdArray(Context, output);
        }

        /// <summary>Up to maxTokens tokens continuing prompt (token ids) with a token model such as a
        /// trained examples/gpt.json, using its key/value cache (nnrt_model_generate). optionsJson: null
        /// for greedy, or "temperature", "top_k", "seed", "stop", "when_full", "cache" as nnrt.h says.
        /// onToken, when given, sees each token as it is chosen; returning true stops generation after it,
        /// and an exception it throws stops generation and is rethrown here.</summary>
        /// <exception cref="NnrtException">InvalidArgument for an empty prompt, a token id outside the
        /// vocabulary, a prompt longer than the model's window, a bad option or a model that is not a
        /// token model; Unsupported for a layer without an incremental path (with the cache).</exception>
        public long[] Generate(long[] prompt, int maxTokens, string optionsJson = null, Func<long, bool> onToken = null)
        {
            if (prompt == null) throw new ArgumentNullException("prompt");
            if (maxTokens < 0) throw new ArgumentOutOfRangeException("maxTokens", "expected 0 or more");
            var tokens = new long[maxTokens];
            Exception thrown = null;
            Native.TokenFn callback = null;
            if (onToken != null)
            {
                callback = (token, user) =>
                {
                    try { return onToken(token) ? 1 : 0; }
                    catch (Exception e) { thrown = e; return 1; }
                };
            }
            UIntPtr written;
            Status status = Native.nnrt_model_generate(Handle, prompt, (UIntPtr)prompt.Length,
                                                       optionsJson == null ? null : Utf8.Encode(optionsJson), tokens,
                                                       (UIntPtr)maxTokens, out written, callback, IntPtr.Zero);
            GC.KeepAlive(callback);
            if (thrown != null) throw thrown;
            Check.Ok(status);
            Array.Resize(ref tokens, (int)written.ToUInt64());
            return tokens;
        }

        /// <summary>The model as JSON: layers with output shapes, parameters and the backend running each
        /// op, "total_params" and "trainable_params".</summary>
        public string Summary()
        {
            return Utf8.Query((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                              Native.nnrt_model_summary(Handle, buf, cap, out len));
        }

        /// <summary>The number of parameter elements (weights, biases and statistics).</summary>
        public long ParamCount
        {
            get
            {
                long count;
                Check.Ok(Native.nnrt_model_param_count(Handle, out count));
                return count;
            }
        }

        /// <summary>A copy of the parameter `name` (e.g. "layer0.weight") as a new F32 array.</summary>
        /// <exception cref="NnrtException">InvalidArgument for an unknown name (the message lists them).</exception>
        public NdArray GetParam(string name)
        {
            ArrayHandle value;
            Check.Ok(Native.nnrt_model_get_param(Handle, Utf8.Encode(name), out value));
            return new NdArray(Context, value);
        }

        /// <summary>Copies value into the parameter `name`; a float value of another dtype is converted.</summary>
        /// <exception cref="NnrtException">Shape when the shapes differ; DType for a non-float value.</exception>
        public void SetParam(string name, NdArray value)
        {
            Check.Ok(Native.nnrt_model_set_param(Handle, Utf8.Encode(name), value.Handle));
        }

        /// <summary>Evaluates the model on every example of data: accuracy and per-class metrics for class
        /// labels, MSE/MAE/R^2 for float targets.</summary>
        public Evaluation Evaluate(Dataset data)
        {
            EvaluationHandle evaluation;
            Check.Ok(Native.nnrt_model_evaluate(Handle, data.Handle, out evaluation));
            return new Evaluation(evaluation);
        }

        /// <summary>Releases this reference to the model.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
