package dev.gpudf.columnar.testing;

/** Byte-array helpers for the fuzz tests' check that every value read back came from the input. */
public final class Bytes {
  private Bytes() {}

  /** Whether {@code needle} occurs in {@code haystack}. */
  public static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
