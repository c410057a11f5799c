using System;

namespace Nnrt
{
    /// <summary>One input of a model (nnrt_model_input), as <see cref="Model.Inputs"/> lists them: its name
    /// and the shape of one example. A model of a config with "input" has one, named "input"; one with
    /// "inputs" has those, in the config's order, which is the order <see cref="Model.PredictMany(System.Collections.Generic.IReadOnlyList{NdArray}, RunOptions)"/>
    /// takes its batches in. Immutable.</summary>
    public sealed class ModelInput
    {
        private readonly long[] shape;

        internal ModelInput(int index, string name, long[] shape)
        {
            Index = index;
            Name = name;
            this.shape = shape;
        }

        /// <summary>The position of this input among the model's: its batch's index in PredictMany's inputs.</summary>
        public int Index { get; }

        /// <summary>The name the config gives the input ("input" for a config with "input").</summary>
        public string Name { get; }

        /// <summary>The shape of one example (a copy), without the batch dim: a batch for this input is
        /// [N, Shape...].</summary>
        public long[] Shape { get { return (long[])shape.Clone(); } }

        /// <summary>The name and the example shape, e.g. "ids [6]".</summary>
        public override string ToString() { return Name + " [" + string.Join(", ", shape) + "]"; }
    }
}
