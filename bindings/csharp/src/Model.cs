using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Runtime.InteropServices;

namespace Nnrt
{
    /// <summary>A network built from a JSON config, with its parameters (nnrt_model). Safe to share
    /// between threads: Predict may run on several threads at once, also while a trainer trains it.
    /// A trainer keeps its model alive, so disposing the model first is fine. The overloads that take
    /// <see cref="RunOptions"/> can be stopped early: cancelled from another thread, or past a timeout.</summary>
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
        /// nnrt_model_create. A graph may take several inputs instead, "inputs" (a list of {"name",
        /// "shape"}), and give several outputs: <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>
        /// runs those.</summary>
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

        /// <summary>As <see cref="Load(Context, string)"/>, stopped early as options say (null: never): they are
        /// checked before reading, after reading and checking, after building the model and before each
        /// parameter's upload.</summary>
        /// <exception cref="NnrtException">As Load; Cancelled or DeadlineExceeded when stopped (no model is
        /// made).</exception>
        public static Model Load(Context context, string path, RunOptions options)
        {
            if (options == null) return Load(context, path);
            ModelHandle handle;
            RunOptions.Begin(options);
            Status status = Native.nnrt_model_load_ex(context.Handle, Utf8.Encode(path), options.Handle, out handle);
            RunOptions.Finish(options, status);
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

        /// <summary>As <see cref="ImportOnnx(Context, string, string)"/>, stopped early as runOptions say (null:
        /// never): they are checked before and after the converter reads the file, after the model is
        /// built and before each parameter's upload.</summary>
        /// <exception cref="NnrtException">As ImportOnnx; Cancelled or DeadlineExceeded when stopped (no model
        /// is made).</exception>
        public static Model ImportOnnx(Context context, string path, string optionsJson, RunOptions runOptions)
        {
            if (runOptions == null) return ImportOnnx(context, path, optionsJson);
            ModelHandle handle;
            RunOptions.Begin(runOptions);
            Status status = Native.nnrt_model_import_onnx_ex(context.Handle, Utf8.Encode(path),
                                                             optionsJson == null ? null : Utf8.Encode(optionsJson),
                                                             runOptions.Handle, out handle);
            RunOptions.Finish(runOptions, status);
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
        /// array [N, output shape...] (for an output layer: its activation, e.g. class probabilities).
        /// A model of several inputs (see <see cref="Inputs"/>) takes <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>
        /// instead.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a model of several inputs; Shape when the
        /// input's shape does not fit the model; DType for a BOOL input.</exception>
        public NdArray Predict(NdArray input)
        {
            ArrayHandle output;
            Check.Ok(Native.nnrt_model_predict(Handle, input.Handle, out output));
            return new NdArray(Context, output);
        }

        /// <summary>As <see cref="Predict(NdArray)"/>, stopped early as options say (null: never).</summary>
        /// <exception cref="NnrtException">As Predict; Cancelled (options cancelled, or the abort callback
        /// said stop) or DeadlineExceeded (past the options' timeout) when stopped.</exception>
        public NdArray Predict(NdArray input, RunOptions options)
        {
            if (input == null) throw new ArgumentNullException("input");
            if (options == null) return Predict(input);
            ArrayHandle output;
            RunOptions.Begin(options);
            Status status = Native.nnrt_model_predict_ex(Handle, input.Handle, options.Handle, out output);
            RunOptions.Finish(options, status);
            return new NdArray(Context, output);
        }

        /// <summary>The shape of the prediction for a batch of `batch` examples: [batch, output shape...]
        /// (nnrt_model_output_shape); the size of <see cref="PredictInto(ReadOnlySpan{float}, long[], Span{float}, RunOptions)"/>'s output.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a negative batch.</exception>
        public long[] OutputShape(long batch)
        {
            int ndim;
            var dims = new long[NdArray.MaxDims];
            Check.Ok(Native.nnrt_model_output_shape(Handle, batch, out ndim, dims));
            var shape = new long[ndim];
            Array.Copy(dims, shape, ndim);
            return shape;
        }

        /// <summary>The model's inputs, in the order <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>
        /// takes their batches (nnrt_model_input_count, nnrt_model_input): one named "input" for a config
        /// with "input", else the config's "inputs", each with its name and the shape of one example.</summary>
        public IReadOnlyList<ModelInput> Inputs
        {
            get
            {
                int count;
                Check.Ok(Native.nnrt_model_input_count(Handle, out count));
                var inputs = new ModelInput[count];
                for (int k = 0; k < count; k++)
                {
                    int index = k, ndim = 0;
                    var dims = new long[NdArray.MaxDims];
                    string name = Utf8.Query((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                                             Native.nnrt_model_input(Handle, index, buf, cap, out len, out ndim, dims));
                    var shape = new long[ndim];
                    Array.Copy(dims, shape, ndim);
                    inputs[k] = new ModelInput(k, name, shape);
                }
                return new ReadOnlyCollection<ModelInput>(inputs);
            }
        }

        /// <summary>The number of the model's outputs (nnrt_model_output_count): the length of the config's
        /// "outputs", 1 for a config with "layers". <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>
        /// returns that many arrays.</summary>
        public int OutputCount
        {
            get
            {
                int count;
                Check.Ok(Native.nnrt_model_output_count(Handle, out count));
                return count;
            }
        }

        /// <summary>Runs a model of one or several inputs on one batch per input and returns all its
        /// outputs (nnrt_model_predict_many): inputs[k] is the batch of <see cref="Inputs"/>[k], shaped
        /// [N, its example shape...], every one with the same N (any numeric dtype; each converted to the
        /// context's default float type); the result holds a new F32 array [N, output shape...] per
        /// output, <see cref="OutputCount"/> of them, in the config's "outputs" order. Stopped early as
        /// options say (null: never). Safe from several threads at once, as Predict.</summary>
        /// <exception cref="NnrtException">InvalidArgument when the number of inputs is not the model's;
        /// Shape when an input's shape does not fit its input, or the inputs hold different numbers of
        /// examples (the message names the input); DType for a BOOL input; Cancelled or DeadlineExceeded
        /// when stopped. No output is made then.</exception>
        public NdArray[] PredictMany(IReadOnlyList<NdArray> inputs, RunOptions options = null)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            return PredictMany(inputs, OutputCount, options);
        }

        /// <summary>As <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>, returning only the first
        /// `outputs` outputs (1 to <see cref="OutputCount"/>), in the config's "outputs" order.</summary>
        /// <exception cref="NnrtException">As PredictMany; InvalidArgument also for outputs out of range.</exception>
        public NdArray[] PredictMany(IReadOnlyList<NdArray> inputs, int outputs, RunOptions options = null)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            // A snapshot, so that the list cannot change between the references taken and those dropped.
            var held = new NdArray[inputs.Count];
            for (int i = 0; i < held.Length; i++)
            {
                held[i] = inputs[i];
                if (held[i] == null) throw new ArgumentNullException("inputs", "input " + i + " is null");
            }
            var pointers = new IntPtr[held.Length];
            var referenced = new bool[held.Length];
            // Never empty, so that nnrt sees an array (and says what is wrong with the count) rather than NULL.
            var results = new IntPtr[Math.Max(outputs, 1)];
            try
            {
                // The input pointers travel in a plain IntPtr[], which the marshaler does not reference
                // count; these references keep a concurrent Dispose from freeing an input mid-call.
                for (int i = 0; i < held.Length; i++)
                {
                    held[i].Handle.DangerousAddRef(ref referenced[i]);
                    pointers[i] = held[i].Handle.DangerousGetHandle();
                }
                RunOptions.Begin(options);
                Status status = options == null
                    ? Native.nnrt_model_predict_many_no_options(Handle, pointers, pointers.Length, IntPtr.Zero,
                                                                results, outputs)
                    : Native.nnrt_model_predict_many(Handle, pointers, pointers.Length, options.Handle, results, outputs);
                RunOptions.Finish(options, status); // on failure nnrt wrote no output: nothing to release
            }
            finally
            {
                for (int i = 0; i < held.Length; i++)
                    if (referenced[i]) held[i].Handle.DangerousRelease();
            }
            return TakeArrays(results, outputs);
        }

        /// <summary>As <see cref="PredictMany(IReadOnlyList{NdArray}, RunOptions)"/>, with the batches given by
        /// input name (<see cref="ModelInput.Name"/>); every input of the model must be given, and no other.</summary>
        /// <exception cref="NnrtException">As PredictMany; InvalidArgument for a missing or unknown name (the
        /// message lists the model's inputs).</exception>
        public NdArray[] PredictMany(IReadOnlyDictionary<string, NdArray> inputs, RunOptions options = null)
        {
            if (inputs == null) throw new ArgumentNullException("inputs");
            IReadOnlyList<ModelInput> expected = Inputs;
            var names = new string[expected.Count];
            for (int k = 0; k < names.Length; k++) names[k] = expected[k].Name;
            var ordered = new NdArray[expected.Count];
            var missing = new List<string>();
            for (int k = 0; k < ordered.Length; k++)
                if (!inputs.TryGetValue(names[k], out ordered[k])) missing.Add(names[k]);
            var unknown = new List<string>();
            foreach (string name in inputs.Keys)
                if (Array.IndexOf(names, name) < 0) unknown.Add(name);
            if (missing.Count > 0 || unknown.Count > 0)
                throw new NnrtException(Status.InvalidArgument, string.Format(
                    "the model takes the inputs [{0}]; missing [{1}], unknown [{2}]", string.Join(", ", names),
                    string.Join(", ", missing), string.Join(", ", unknown)));
            return PredictMany(ordered, options);
        }

        // Takes ownership of the first `count` arrays nnrt returned: every pointer gets its handle first,
        // so that if reading one array's info fails, all of them are released, none leaked.
        private NdArray[] TakeArrays(IntPtr[] results, int count)
        {
            var handles = new ArrayHandle[count];
            var arrays = new NdArray[count];
            try
            {
                for (int i = 0; i < count; i++) handles[i] = new ArrayHandle(results[i]);
                for (int i = 0; i < count; i++) arrays[i] = new NdArray(Context, handles[i]);
                return arrays;
            }
            catch
            {
                for (int i = 0; i < count; i++)
                {
                    if (handles[i] != null) handles[i].Dispose();
                    else if (results[i] != IntPtr.Zero) Native.nnrt_array_release(results[i]);
                }
                throw;
            }
        }

        /// <summary>Writes the prediction for input into output, an F32 array shaped
        /// <see cref="OutputShape"/>(batch) made beforehand (nnrt_model_predict_into), for instance by
        /// <see cref="NdArray.Zeros"/>. The one call that changes an array: nothing may read or write
        /// output meanwhile. On failure output's contents are unspecified.</summary>
        /// <exception cref="NnrtException">As Predict; Shape or DType for a wrong output; Cancelled or
        /// DeadlineExceeded when stopped.</exception>
        public void PredictInto(NdArray input, NdArray output, RunOptions options = null)
        {
            if (input == null) throw new ArgumentNullException("input");
            if (output == null) throw new ArgumentNullException("output");
            RunOptions.Begin(options);
            Status status = options == null
                ? Native.nnrt_model_predict_into_no_options(Handle, input.Handle, output.Handle, IntPtr.Zero)
                : Native.nnrt_model_predict_into(Handle, input.Handle, output.Handle, options.Handle);
            RunOptions.Finish(options, status);
        }

        /// <summary>Runs the model on a batch of row-major F32 values in the caller's memory, input shaped
        /// `shape` ([N, input shape...]), and writes the prediction, row-major, into output, which must
        /// hold exactly the elements of <see cref="OutputShape"/>(N). No copy: for the duration of this
        /// one call both spans are pinned and lent to nnrt (nnrt_array_wrap_host), which reads input where
        /// it lies and writes its last op's result straight into output (nnrt_model_predict_into); the
        /// wrappers are released before the call returns, and nnrt keeps nothing. On a backend whose
        /// arrays are not in host memory (a GPU), and when the spans overlap, the values are copied
        /// instead, with the same result. Needs the model's <see cref="Context"/> undisposed.</summary>
        /// <exception cref="NnrtException">InvalidArgument when input does not hold the elements of shape;
        /// Shape when output does not hold those of the prediction, or shape does not fit the model;
        /// Cancelled or DeadlineExceeded when stopped (output's contents are then unspecified).</exception>
        public unsafe void PredictInto(ReadOnlySpan<float> input, long[] shape, Span<float> output, RunOptions options = null)
        {
            if (shape == null) throw new ArgumentNullException("shape");
            if (shape.Length == 0 || shape.Length > NdArray.MaxDims)
                throw new NnrtException(Status.InvalidArgument, string.Format(
                    "the input shape has {0} dimensions; expected 1 to {1}, the first the batch", shape.Length, NdArray.MaxDims));
            long inCount = ElementsOf(shape);
            if (inCount != input.Length)
                throw new NnrtException(Status.InvalidArgument, string.Format(
                    "input holds {0} floats, but shape [{1}] has {2} elements", input.Length, string.Join(", ", shape), inCount));
            long[] outShape = OutputShape(shape[0]);
            long outCount = ElementsOf(outShape);
            if (outCount != output.Length)
                throw new NnrtException(Status.Shape, string.Format(
                    "output holds {0} floats, but the prediction for a batch of {1} has shape [{2}], {3} elements",
                    output.Length, shape[0], string.Join(", ", outShape), outCount));
            long inBytes = inCount * 4, outBytes = outCount * 4;
            fixed (float* pin = &MemoryMarshal.GetReference(input))
            fixed (float* pout = &MemoryMarshal.GetReference(output))
            {
                bool overlap = inCount > 0 && outCount > 0 && pin < pout + outCount && pout < pin + inCount;
                if (overlap)
                {
                    PredictByCopy((IntPtr)pin, inBytes, shape, (IntPtr)pout, outBytes, options);
                    return;
                }
                ArrayHandle x = null, y = null;
                try
                {
                    Status status = Native.nnrt_array_wrap_host(Context.Handle, DType.F32, shape.Length, shape, null, (IntPtr)pin,
                                                                (UIntPtr)(ulong)inBytes, null, IntPtr.Zero, out x);
                    if (status == Status.Ok)
                        status = Native.nnrt_array_wrap_host(Context.Handle, DType.F32, outShape.Length, outShape, null,
                                                             (IntPtr)pout, (UIntPtr)(ulong)outBytes, null, IntPtr.Zero, out y);
                    if (status == Status.Unsupported)
                    {
                        // A backend whose arrays are not in host memory cannot use the caller's.
                        PredictByCopy((IntPtr)pin, inBytes, shape, (IntPtr)pout, outBytes, options);
                        return;
                    }
                    Check.Ok(status);
                    RunOptions.Begin(options);
                    status = options == null
                        ? Native.nnrt_model_predict_into_no_options(Handle, x, y, IntPtr.Zero)
                        : Native.nnrt_model_predict_into(Handle, x, y, options.Handle);
                    RunOptions.Finish(options, status);
                }
                finally
                {
                    // The prediction kept no reference to either array, and nothing else holds these
                    // handles, so releasing them here, while the memory is still pinned, ends nnrt's use
                    // of it.
                    if (x != null) x.Dispose();
                    if (y != null) y.Dispose();
                }
            }
        }

        // The prediction of a copy of the input, copied into the output: for memory nnrt cannot use in
        // place. The caller keeps both pinned for the duration.
        private void PredictByCopy(IntPtr input, long inBytes, long[] shape, IntPtr output, long outBytes, RunOptions options)
        {
            ArrayHandle x;
            Check.Ok(Native.nnrt_array_from_host(Context.Handle, DType.F32, shape.Length, shape, input,
                                                 (UIntPtr)(ulong)inBytes, out x));
            using (x)
            {
                ArrayHandle y;
                RunOptions.Begin(options);
                Status status = options == null
                    ? Native.nnrt_model_predict(Handle, x, out y)
                    : Native.nnrt_model_predict_ex(Handle, x, options.Handle, out y);
                RunOptions.Finish(options, status);
                using (y) Check.Ok(Native.nnrt_array_to_host(y, output, (UIntPtr)(ulong)outBytes));
            }
        }

        private static long ElementsOf(long[] shape)
        {
            long n = 1;
            foreach (long d in shape)
            {
                if (d < 0)
                    throw new NnrtException(Status.InvalidArgument, "shape [" + string.Join(", ", shape) + "] has a negative dimension");
                n = checked(n * d);
            }
            return n;
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

        /// <summary>Another model of the same config on the same context whose parameters are this
        /// model's memory, not a copy, so that many instances cost the parameters once. Parameters
        /// are copied on write: a model that is trained or has a parameter set gets its own copy
        /// first, so the others never see the change (nnrt_model_share).</summary>
        public Model Share()
        {
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_share(Handle, out handle));
            return new Model(Context, handle);
        }

        /// <summary>An int8 copy of this model for inference (post-training static quantization,
        /// nnrt_model_quantize), calibrated on the examples of calibration (its labels are not used): each
        /// dense and conv2d layer gets <see cref="DType.I8"/> weights with a scale per output unit or filter,
        /// and quantizes its input with a scale fixed from the range it took on the calibration examples.
        /// optionsJson is null for the defaults, or a JSON object with "batches" (default 8; 0: all),
        /// "batch_size" (32), "weight_bits" (7, the default, or 8) and "exclude" (layer names kept in
        /// float). The copy is independent of this model: it predicts, evaluates, saves and shares
        /// (<see cref="GetParam"/> gives its integer weights as F32, <see cref="SetParam"/> takes I8 values
        /// for them), but a <see cref="Trainer"/> and <see cref="ExportOnnx"/> refuse it.</summary>
        /// <exception cref="NnrtException">InvalidArgument for unknown options or layer names, or a model
        /// with no dense or conv2d layer; Shape when the calibration examples do not fit the model;
        /// Unsupported for a model that is already quantized.</exception>
        public Model Quantize(Dataset calibration, string optionsJson = null)
        {
            if (calibration == null) throw new ArgumentNullException("calibration");
            ModelHandle handle;
            Check.Ok(Native.nnrt_model_quantize(Handle, calibration.Handle,
                                                optionsJson == null ? null : Utf8.Encode(optionsJson), out handle));
            return new Model(Context, handle);
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

        /// <summary>A copy of the parameter `name` (e.g. "layer0.weight") as a new F32 array (a quantized
        /// weight's integers too).</summary>
        /// <exception cref="NnrtException">InvalidArgument for an unknown name (the message lists them).</exception>
        public NdArray GetParam(string name)
        {
            ArrayHandle value;
            Check.Ok(Native.nnrt_model_get_param(Handle, Utf8.Encode(name), out value));
            return new NdArray(Context, value);
        }

        /// <summary>Copies value into the parameter `name`; a float value of another dtype is converted. A
        /// quantized layer's weight takes I8 values only (<see cref="NdArray.FromHost(Context, sbyte[], long[])"/>),
        /// within [-63, 63] for 7-bit weights.</summary>
        /// <exception cref="NnrtException">Shape when the shapes differ; DType for a non-float value, or a
        /// value other than I8 for a quantized weight; InvalidArgument for a quantized weight out of its
        /// range.</exception>
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

        /// <summary>As <see cref="Evaluate(Dataset)"/>, stopped early as options say (null: never), checked
        /// between batches and before every op.</summary>
        /// <exception cref="NnrtException">As Evaluate; Cancelled or DeadlineExceeded when stopped.</exception>
        public Evaluation Evaluate(Dataset data, RunOptions options)
        {
            if (data == null) throw new ArgumentNullException("data");
            if (options == null) return Evaluate(data);
            EvaluationHandle evaluation;
            RunOptions.Begin(options);
            Status status = Native.nnrt_model_evaluate_ex(Handle, data.Handle, options.Handle, out evaluation);
            RunOptions.Finish(options, status);
            return new Evaluation(evaluation);
        }

        /// <summary>Releases this reference to the model.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
