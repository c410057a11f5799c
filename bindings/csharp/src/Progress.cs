using System;
using System.Runtime.InteropServices;

namespace Nnrt
{
    /// <summary>What a progress callback receives (a copy of nnrt_progress). Members the library's struct
    /// does not have yet (an older libnnrt) keep their defaults: see <see cref="StructSize"/>.</summary>
    public sealed class Progress
    {
        /// <summary>The size of the C struct the library filled in.</summary>
        public int StructSize { get; private set; }
        /// <summary>The epoch, 0-based.</summary>
        public int Epoch { get; private set; }
        /// <summary>Minibatches so far, over all epochs.</summary>
        public long Iteration { get; private set; }
        /// <summary>Examples seen so far, over all epochs.</summary>
        public long ExamplesSeen { get; private set; }
        /// <summary>The loss of the last minibatch.</summary>
        public double Loss { get; private set; }
        /// <summary>The learning rate used for the last minibatch.</summary>
        public double LearningRate { get; private set; }
        /// <summary>Throughput over the current epoch so far.</summary>
        public double ExamplesPerSecond { get; private set; }
        /// <summary>True on the extra call after an epoch, when <see cref="ValidationScore"/> is filled in.</summary>
        public bool EpochEnd { get; private set; }
        /// <summary>The validation metric after an epoch; NaN when there is none.</summary>
        public double ValidationScore { get; private set; }
        /// <summary>Minibatches in one epoch.</summary>
        public long BatchesPerEpoch { get; private set; }
        /// <summary>The minibatch within the epoch, 0-based.</summary>
        public long Batch { get; private set; }
        /// <summary>The training device's utilization in percent (a GPU whose backend reads NVML, sampled
        /// at most about once a second); -1 when unknown, as always on a CPU.</summary>
        public int DeviceUtilizationPercent { get; private set; }
        /// <summary>The training device's temperature in degrees Celsius; -1 when unknown.</summary>
        public int DeviceTemperatureCelsius { get; private set; }
        /// <summary>Memory in use on the training device, by every process; -1 when unknown.</summary>
        public long DeviceMemoryUsedBytes { get; private set; }
        /// <summary>The training device's memory; -1 when unknown.</summary>
        public long DeviceMemoryTotalBytes { get; private set; }

        // Offsets of nnrt_progress's members on the 64-bit ABIs nnrt supports (checked against
        // offsetof in the C header: int32 epoch_end is followed by 4 bytes of padding).
        private const int EpochAt = 4, IterationAt = 8, ExamplesSeenAt = 16, LossAt = 24, LearningRateAt = 32,
                          ExamplesPerSecondAt = 40, EpochEndAt = 48, ValidationScoreAt = 56,
                          BatchesPerEpochAt = 64, BatchAt = 72, DeviceUtilizationAt = 80,
                          DeviceTemperatureAt = 84, DeviceMemoryUsedAt = 88, DeviceMemoryTotalAt = 96;

        /// <summary>Copies the struct at p, reading only members that fit in its struct_size, as the
        /// header asks of readers.</summary>
        internal Progress(IntPtr p)
        {
            int size = Marshal.ReadInt32(p, 0);
            StructSize = size;
            ValidationScore = double.NaN;
            if (size >= EpochAt + 4) Epoch = Marshal.ReadInt32(p, EpochAt);
            if (size >= IterationAt + 8) Iteration = Marshal.ReadInt64(p, IterationAt);
            if (size >= ExamplesSeenAt + 8) ExamplesSeen = Marshal.ReadInt64(p, ExamplesSeenAt);
            if (size >= LossAt + 8) Loss = ReadDouble(p, LossAt);
            if (size >= LearningRateAt + 8) LearningRate = ReadDouble(p, LearningRateAt);
            if (size >= ExamplesPerSecondAt + 8) ExamplesPerSecond = ReadDouble(p, ExamplesPerSecondAt);
            if (size >= EpochEndAt + 4) EpochEnd = Marshal.ReadInt32(p, EpochEndAt) != 0;
            if (size >= ValidationScoreAt + 8) ValidationScore = ReadDouble(p, ValidationScoreAt);
            if (size >= BatchesPerEpochAt + 8) BatchesPerEpoch = Marshal.ReadInt64(p, BatchesPerEpochAt);
            if (size >= BatchAt + 8) Batch = Marshal.ReadInt64(p, BatchAt);
            DeviceUtilizationPercent = size >= DeviceUtilizationAt + 4 ? Marshal.ReadInt32(p, DeviceUtilizationAt) : -1;
            DeviceTemperatureCelsius = size >= DeviceTemperatureAt + 4 ? Marshal.ReadInt32(p, DeviceTemperatureAt) : -1;
            DeviceMemoryUsedBytes = size >= DeviceMemoryUsedAt + 8 ? Marshal.ReadInt64(p, DeviceMemoryUsedAt) : -1;
            DeviceMemoryTotalBytes = size >= DeviceMemoryTotalAt + 8 ? Marshal.ReadInt64(p, DeviceMemoryTotalAt) : -1;
        }

        private static double ReadDouble(IntPtr p, int offset)
        {
            return BitConverter.Int64BitsToDouble(Marshal.ReadInt64(p, offset));
        }
    }

    /// <summary>Called after every minibatch and once more after every epoch, on the thread running
    /// <see cref="Trainer.Fit(Dataset, Dataset, int)"/>. Return true to stop training (Fit then returns normally and the result
    /// says "callback"). It must not call the trainer's methods; an exception it throws stops training
    /// and is rethrown by Fit.</summary>
    public delegate bool ProgressCallback(Progress progress);
}
