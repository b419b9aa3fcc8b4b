package dev.gpudf.columnar.cuda;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Address-range bookkeeping shared by the device and pinned host pools: chunks of memory the
 * caller obtained elsewhere, carved best-fit into aligned blocks that coalesce with free
 * neighbours of the same chunk. Holds no memory itself and is not thread-safe: the owning pool
 * synchronises.
 */
final class BlockAllocator {
  private final long alignment;
  private final TreeMap<Long, Long> chunks = new TreeMap<>();
  private final TreeMap<Long, Long> freeByAddress = new TreeMap<>();
  private final TreeSet<long[]> freeBySize =
      new TreeSet<>(Comparator.<long[]>comparingLong(b -> b[1]).thenComparingLong(b -> b[0]));
  private long reserved;

  BlockAllocator(long alignment) {
    this.alignment = alignment;
  }

  /** {@code size} rounded up to the alignment, at least one unit. */
  long round(long size) {
    return (Math.max(size, 1) + alignment - 1) / alignment * alignment;
  }

  /** Adds a chunk, all free. */
  void addChunk(long base, long size) {
    chunks.put(base, size);
    reserved += size;
    give(base, size);
  }

  /** Bytes in all chunks. */
  long reserved() {
    return reserved;
  }

  int chunkCount() {
    return chunks.size();
  }

  /** Takes a block of {@code rounded} bytes (already {@link #round rounded}); null when none fits. */
  Long take(long rounded) {
    long[] block = freeBySize.ceiling(new long[] {-1, rounded});
    if (block == null) {
      return null;
    }
    freeBySize.remove(block);
    freeByAddress.remove(block[0]);
    if (block[1] > rounded) {
      give(block[0] + rounded, block[1] - rounded);
    }
    return block[0];
  }

  /** Returns a block taken earlier, merging it with free neighbours in its chunk. */
  void give(long address, long size) {
    long chunkBase = chunks.floorKey(address);
    long chunkEnd = chunkBase + chunks.get(chunkBase);
    Map.Entry<Long, Long> before = freeByAddress.floorEntry(address);
    if (before != null && before.getKey() >= chunkBase && before.getKey() + before.getValue() == address) {
      removeFree(before.getKey(), before.getValue());
      address = before.getKey();
      size += before.getValue();
    }
    Long afterSize = address + size < chunkEnd ? freeByAddress.get(address + size) : null;
    if (afterSize != null) {
      removeFree(address + size, afterSize);
      size += afterSize;
    }
    freeByAddress.put(address, size);
    freeBySize.add(new long[] {address, size});
  }

  /** Removes and returns the chunks with nothing taken, as {base, size} pairs, for the caller to free. */
  List<long[]> removeEmptyChunks() {
    List<long[]> empty = new ArrayList<>();
    for (Map.Entry<Long, Long> c : chunks.entrySet()) {
      Long free = freeByAddress.get(c.getKey());
      if (free != null && free.longValue() == c.getValue()) {
        empty.add(new long[] {c.getKey(), c.getValue()});
      }
    }
    for (long[] c : empty) {
      chunks.remove(c[0]);
      removeFree(c[0], c[1]);
      reserved -= c[1];
    }
    return empty;
  }

  /** Removes and returns every chunk, taken or not, for the caller to free. */
  List<long[]> removeAllChunks() {
    List<long[]> all = new ArrayList<>();
    chunks.forEach((base, size) -> all.add(new long[] {base, size}));
    chunks.clear();
    freeByAddress.clear();
    freeBySize.clear();
    reserved = 0;
    return all;
  }

  private void removeFree(long address, long size) {
    freeByAddress.remove(address);
    freeBySize.remove(new long[] {address, size});
  }
}
