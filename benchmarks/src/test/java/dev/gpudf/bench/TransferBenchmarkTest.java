package dev.gpudf.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The host side of {@link TransferBenchmark}: what a files report's floors divide by. */
class TransferBenchmarkTest {
  /** Threads copying their slices give a rate a host can have: above 0.1 GB/s, below 10 TB/s. */
  @Test
  void theHostCopyGivesARate() throws InterruptedException {
    double gbps = TransferBenchmark.hostCopyGBps(64L << 20, 2, 3);
    assertTrue(gbps > 0.1 && gbps < 10_000, "host copy " + gbps + " GB/s");
  }
}
