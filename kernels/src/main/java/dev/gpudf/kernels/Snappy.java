package dev.gpudf.kernels;

/**
 * Snappy block decompression, the CPU twin of {@code unsnap} in {@code parquet_decode.cu}: the
 * same element rules and the same checks (a declared size that is not the output's, a copy from
 * before the start, a run past either end), so the two accept exactly the same blocks.
 */
final class Snappy {
  private Snappy() {}

  /** Decompresses block {@code in} into all of {@code out}; false when it is corrupt or not {@code out.length} bytes. */
  static boolean decompress(byte[] in, byte[] out) {
    int p = 0;
    long declared = 0;
    for (int shift = 0; ; shift += 7) {
      if (shift >= 35 || p >= in.length) {
        return false;
      }
      int b = in[p++] & 0xff;
      declared |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    if (declared != out.length) {
      return false;
    }
    int pos = 0;
    while (p < in.length) {
      int tag = in[p++] & 0xff;
      long len;
      int type = tag & 3;
      if (type == 0) {
        len = (tag >>> 2) + 1;
        if (len > 60) {
          int extra = (int) len - 60;
          if (in.length - p < extra) {
            return false;
          }
          len = 0;
          for (int k = 0; k < extra; k++) {
            len |= (long) (in[p + k] & 0xff) << (8 * k);
          }
          len += 1;
          p += extra;
        }
        if (in.length - p < len || out.length - pos < len) {
          return false;
        }
        System.arraycopy(in, p, out, pos, (int) len);
        p += (int) len;
      } else {
        long offset;
        if (type == 1) {
          if (in.length - p < 1) {
            return false;
          }
          len = 4 + ((tag >>> 2) & 7);
          offset = ((long) (tag >>> 5) << 8) | (in[p] & 0xff);
          p += 1;
        } else if (type == 2) {
          if (in.length - p < 2) {
            return false;
          }
          len = (tag >>> 2) + 1;
          offset = (in[p] & 0xff) | (long) (in[p + 1] & 0xff) << 8;
          p += 2;
        } else {
          if (in.length - p < 4) {
            return false;
          }
          len = (tag >>> 2) + 1;
          offset = (in[p] & 0xff) | (long) (in[p + 1] & 0xff) << 8 | (long) (in[p + 2] & 0xff) << 16
              | (long) (in[p + 3] & 0xff) << 24;
          p += 4;
        }
        if (offset <= 0 || offset > pos || out.length - pos < len) {
          return false;
        }
        int from = pos - (int) offset;
        if (offset >= len) {
          System.arraycopy(out, from, out, pos, (int) len);
        } else {
          // byte by byte: a copy closer than its length repeats what it has just written
          for (int k = 0; k < len; k++) {
            out[pos + k] = out[from + k];
          }
        }
      }
      pos += (int) len;
    }
    return pos == out.length;
  }
}
