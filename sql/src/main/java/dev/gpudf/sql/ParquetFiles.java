package dev.gpudf.sql;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.formats.ParquetFooter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.dataset.source.DatasetFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Parquet files through Arrow Dataset's native reader (JNI), which keeps the file's types
 * (DECIMAL, DATE, TIMESTAMP). A class of its own so that nothing else loads the native library.
 */
final class ParquetFiles {
  private ParquetFiles() {}

  /** The rows of a Parquet file as one root; the caller closes it. */
  static VectorSchemaRoot read(Path file, BufferAllocator allocator) {
    if (!Files.isRegularFile(file)) {
      throw new UserException("no file " + file);
    }
    try {
      // Arrow's native reader sizes allocations by the footer's row counts: checked first
      ParquetFooter.check(file);
    } catch (java.io.IOException | RuntimeException e) {
      throw new UserException(file + ": its Parquet footer cannot be read: " + e.getMessage(), e);
    }
    try (DatasetFactory factory = new FileSystemDatasetFactory(allocator, NativeMemoryPool.getDefault(),
            FileFormat.PARQUET, file.toAbsolutePath().toUri().toString());
        Dataset dataset = factory.finish();
        Scanner scanner = dataset.newScan(new ScanOptions(1 << 16));
        ArrowReader reader = scanner.scanBatches()) {
      return FileTables.allBatches(reader, allocator, file.toString());
    } catch (UserException e) {
      throw e;
    } catch (Exception e) {
      // the native reader reports a damaged or foreign file as a RuntimeException; closing a
      // dataset or scanner is declared to throw Exception
      throw new UserException("cannot read Parquet file " + file + ": " + e.getMessage(), e);
    }
  }
}
