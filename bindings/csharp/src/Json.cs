using System;
using System.Globalization;
using System.Text;

namespace Nnrt
{
    /// <summary>Writes the small JSON objects the binding passes as op attributes and dataset specs.
    /// Configs written by users stay plain strings: the binding does not model them.</summary>
    internal sealed class JsonObject
    {
        private readonly StringBuilder text = new StringBuilder("{");

        private JsonObject Key(string key)
        {
            if (text.Length > 1) text.Append(", ");
            Quote(text, key);
            text.Append(": ");
            return this;
        }

        /// <summary>Adds "key": true/false.</summary>
        public JsonObject Add(string key, bool value) { Key(key).text.Append(value ? "true" : "false"); return this; }

        /// <summary>Adds "key": integer.</summary>
        public JsonObject Add(string key, long value)
        {
            Key(key).text.Append(value.ToString(CultureInfo.InvariantCulture));
            return this;
        }

        /// <summary>Adds "key": number, written so it reads back as the same double.</summary>
        public JsonObject Add(string key, double value)
        {
            if (double.IsNaN(value) || double.IsInfinity(value))
                throw new ArgumentException("JSON has no NaN or infinity", key);
            Key(key).text.Append(value.ToString("R", CultureInfo.InvariantCulture));
            return this;
        }

        /// <summary>Adds "key": "string".</summary>
        public JsonObject Add(string key, string value) { Quote(Key(key).text, value); return this; }

        /// <summary>Adds "key": [integers].</summary>
        public JsonObject Add(string key, long[] values)
        {
            Key(key).text.Append('[');
            for (int i = 0; i < values.Length; i++)
            {
                if (i > 0) text.Append(", ");
                text.Append(values[i].ToString(CultureInfo.InvariantCulture));
            }
            text.Append(']');
            return this;
        }

        /// <summary>The object's text.</summary>
        public override string ToString() { return text.ToString() + "}"; }

        /// <summary>Appends s as a JSON string literal.</summary>
        private static void Quote(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.AppendFormat(CultureInfo.InvariantCulture, "\\u{0:x4}", (int)c);
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }
    }
}
