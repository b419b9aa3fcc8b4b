package dev.gpudf.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Compiled generated kernels (cubins) on disk, so that a fresh process skips the driver's PTX
 * compile (20-150 ms a TPC-H query's first run on an H100). A file is named by the SHA-256 of the
 * PTX text and of what the machine code depends on (device name, compute capability, driver
 * version); it holds the cubin and the SHA-256 of the cubin, checked on every read, so a torn or
 * altered file is a miss (and is replaced), never a kernel. Files are written to a temporary
 * name and renamed, so a reader never sees half of one. The directory is {@code
 * -Dgpudf.kernelCache} (or {@code GPUDF_KERNEL_CACHE}), by default {@code
 * ~/.cache/gpudf/kernels}; {@code off} keeps no files.
 */
final class KernelCache {
  /** Larger files are not read: generated kernels are tens of KiB. */
  static final long MAX_BYTES = 16L << 20;
  private static final int DIGEST = 32;
  private final Path dir;
  private final byte[] machine;

  /** A cache in {@code dir} (null: none) for code that runs on {@code machine} (device, capability, driver). */
  KernelCache(Path dir, String machine) {
    this.dir = dir;
    this.machine = machine.getBytes(StandardCharsets.UTF_8);
  }

  /** The directory the properties name; null when they say {@code off}. */
  static Path configuredDirectory() {
    String v = System.getProperty("gpudf.kernelCache", System.getenv("GPUDF_KERNEL_CACHE"));
    if (v == null || v.isBlank()) {
      return Path.of(System.getProperty("user.home"), ".cache", "gpudf", "kernels");
    }
    return v.equals("off") ? null : Path.of(v);
  }

  /** Whether files are kept at all. */
  boolean enabled() {
    return dir != null;
  }

  /** The file name for {@code ptx}: the hash of the PTX and of the machine. */
  String key(byte[] ptx) {
    MessageDigest d = sha256();
    d.update(machine);
    d.update((byte) 0);
    d.update(ptx);
    return HexFormat.of().formatHex(d.digest());
  }

  /** The cubin stored under {@code key}, or null: no file, a file too large, or one whose checksum fails. */
  byte[] read(String key) throws IOException {
    if (dir == null) {
      return null;
    }
    Path f = dir.resolve(key + ".cubin");
    byte[] all;
    try (InputStream in = Files.newInputStream(f)) {
      all = in.readNBytes((int) MAX_BYTES + 1);
    } catch (NoSuchFileException missing) {
      return null;
    }
    if (all.length > MAX_BYTES || all.length <= DIGEST) {
      return null;
    }
    byte[] cubin = Arrays.copyOf(all, all.length - DIGEST);
    byte[] stored = Arrays.copyOfRange(all, all.length - DIGEST, all.length);
    return MessageDigest.isEqual(sha256().digest(cubin), stored) ? cubin : null;
  }

  /** Stores {@code cubin} under {@code key}: written beside and renamed into place. */
  void write(String key, byte[] cubin) throws IOException {
    if (dir == null || cubin.length + DIGEST > MAX_BYTES) {
      return;
    }
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, key, ".part");
    try {
      byte[] all = Arrays.copyOf(cubin, cubin.length + DIGEST);
      System.arraycopy(sha256().digest(cubin), 0, all, cubin.length, DIGEST);
      Files.write(tmp, all);
      try {
        Files.move(tmp, dir.resolve(key + ".cubin"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException notAtomic) {
        // the temporary file is in the same directory: only an odd file system refuses; keep no file there
        throw new IOException("the kernel cache's file system cannot rename atomically: " + dir, notAtomic);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new dev.gpudf.columnar.error.InternalException("this JVM has no SHA-256", e);
    }
  }
}
