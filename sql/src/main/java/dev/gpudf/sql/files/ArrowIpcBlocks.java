package dev.gpudf.sql.files;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The blocks an Arrow IPC file's footer lists, checked before Arrow's reader loads any of them:
 * each block inside the file, its message header's length inside the block, the header a record
 * (or dictionary) batch, and every buffer of the batch inside the block's body. Arrow's reader
 * slices buffers with bounds checks but keeps the block's memory when a slice fails, so a damaged
 * file read through it would leak; checked here first, it fails with nothing allocated.
 */
public final class ArrowIpcBlocks {
  /** Most bytes a batch's message header may take: a larger claim is a damaged file. */
  private static final int MAX_HEADER_BYTES = 16 << 20;

  private ArrowIpcBlocks() {}

  /**
   * Checks every dictionary and record batch block of {@code reader} (open over {@code ch}, a file
   * of {@code size} bytes) and returns each record batch's row count; a {@link UserException}
   * naming {@code file} for the first damaged block.
   */
  public static List<Integer> check(FileChannel ch, ArrowFileReader reader, long size, Path file) throws IOException {
    for (ArrowBlock block : reader.getDictionaryBlocks()) {
      Message m = header(ch, block, size, file);
      if (m.headerType() != MessageHeader.DictionaryBatch) {
        throw new UserException(file + " has a dictionary block at " + block.getOffset() + " that is not a dictionary batch");
      }
      RecordBatch data = ((DictionaryBatch) m.header(new DictionaryBatch())).data();
      if (data == null) {
        throw new UserException(file + " has a dictionary batch at " + block.getOffset() + " without data");
      }
      rows(data, block, file);
    }
    List<Field> fields = new ArrayList<>();
    flatten(reader.getVectorSchemaRoot().getSchema().getFields(), fields);
    int topLevel = reader.getVectorSchemaRoot().getSchema().getFields().size();
    List<Integer> rows = new ArrayList<>();
    for (ArrowBlock block : reader.getRecordBlocks()) {
      Message m = header(ch, block, size, file);
      if (m.headerType() != MessageHeader.RecordBatch) {
        throw new UserException(file + " has a block at " + block.getOffset() + " that is not a record batch");
      }
      RecordBatch batch = (RecordBatch) m.header(new RecordBatch());
      int n = rows(batch, block, file);
      sizes(batch, fields, topLevel, block, file);
      rows.add(n);
    }
    return rows;
  }

  /** The fields in the order of a batch's field nodes: each before its children. */
  private static void flatten(List<Field> fields, List<Field> out) {
    for (Field f : fields) {
      out.add(f);
      flatten(f.getChildren(), out);
    }
  }

  /**
   * A record batch has a node for each field, a top-level node per column with the batch's row
   * count, the buffers its fields' layouts call for, and each buffer long enough for its node's
   * values (a string column's data is checked against its offsets after loading, by {@link
   * dev.gpudf.columnar.ArrowInput}). Arrow's loader would otherwise grow a short buffer by copying
   * past its end, or keep memory when it fails.
   */
  private static void sizes(RecordBatch batch, List<Field> fields, int topLevel, ArrowBlock block, Path file) {
    String at = file + " has a record batch at " + block.getOffset();
    if (batch.compression() != null) {
      throw new UserException(at + " that is compressed, which gpudf does not read (write the file uncompressed)");
    }
    if (batch.nodesLength() != fields.size()) {
      throw new UserException(at + " with " + batch.nodesLength() + " column nodes for a schema of " + fields.size());
    }
    int buffer = 0;
    for (int n = 0; n < fields.size(); n++) {
      FieldNode node = batch.nodes(n);
      if (n < topLevel && node.length() != batch.length()) {
        throw new UserException(at + " whose column " + n + " has " + node.length() + " values in a batch of "
            + batch.length() + " rows");
      }
      for (BufferLayout layout : TypeLayout.getTypeLayout(fields.get(n).getType()).getBufferLayouts()) {
        if (buffer >= batch.buffersLength()) {
          throw new UserException(at + " with fewer buffers (" + batch.buffersLength() + ") than its columns need");
        }
        long length = batch.buffers(buffer).length();
        long need = switch (layout.getType()) {
          case VALIDITY -> node.nullCount() == 0 && length == 0 ? 0 : (node.length() + 7) / 8;
          case OFFSET -> node.length() == 0 && length == 0 ? 0 : (node.length() + 1) * layout.getTypeBitWidth() / 8;
          case DATA -> layout.getTypeBitWidth() == 8 && isVariableWidth(fields.get(n)) ? 0
              : (node.length() * layout.getTypeBitWidth() + 7) / 8;
          default -> 0;
        };
        if (length < need) {
          throw new UserException(at + " whose column '" + fields.get(n).getName() + "' has a " + layout.getType()
              + " buffer of " + length + " bytes for " + node.length() + " values (" + need + " needed)");
        }
        buffer++;
      }
    }
    if (buffer != batch.buffersLength()) {
      throw new UserException(at + " with " + batch.buffersLength() + " buffers where its columns have " + buffer);
    }
  }

  /** Whether the field's values buffer holds bytes of variable-width values (checked against the offsets later). */
  private static boolean isVariableWidth(Field f) {
    return f.getType() instanceof ArrowType.Utf8 || f.getType() instanceof ArrowType.Binary
        || f.getType() instanceof ArrowType.LargeUtf8 || f.getType() instanceof ArrowType.LargeBinary;
  }

  /** The message header of {@code block}, read after checking that it lies inside the file. */
  private static Message header(FileChannel ch, ArrowBlock block, long size, Path file) throws IOException {
    if (block.getOffset() < 0 || block.getMetadataLength() < 8 || block.getMetadataLength() > MAX_HEADER_BYTES
        || block.getBodyLength() < 0 || block.getOffset() + block.getMetadataLength() + block.getBodyLength() > size) {
      throw new UserException("a batch of " + file + " (at " + block.getOffset() + ", " + block.getMetadataLength()
          + " + " + block.getBodyLength() + " bytes) does not lie inside the file");
    }
    ByteBuffer header = ByteBuffer.allocate(block.getMetadataLength()).order(ByteOrder.LITTLE_ENDIAN);
    ch.position(block.getOffset());
    while (header.hasRemaining() && ch.read(header) >= 0) {
      // a file channel reads what it can; the loop ends when the header is full or the file ends
    }
    if (header.hasRemaining()) {
      throw new UserException(file + " ends inside a batch header at " + block.getOffset());
    }
    // the IPC prefix: 0xFFFFFFFF, then the header's length (older files: the length alone)
    int prefix = header.getInt(0) == -1 ? 8 : 4;
    int claimed = header.getInt(prefix - 4);
    if (claimed < 0 || claimed > block.getMetadataLength() - prefix) {
      throw new UserException(file + " has a batch header of " + claimed + " bytes in a block of "
          + block.getMetadataLength());
    }
    try {
      return Message.getRootAsMessage(header.slice(prefix, claimed).order(ByteOrder.LITTLE_ENDIAN));
    } catch (RuntimeException e) {
      throw new UserException(file + " has a damaged batch header at " + block.getOffset() + ": " + e, e);
    }
  }

  /** The batch's row count, after checking its field nodes and that its buffers lie inside the block's body. */
  private static int rows(RecordBatch batch, ArrowBlock block, Path file) {
    try {
      long rows = batch.length();
      if (rows < 0 || rows > Integer.MAX_VALUE) {
        throw new UserException(file + " has a batch of " + rows + " rows at " + block.getOffset());
      }
      for (int n = 0; n < batch.nodesLength(); n++) {
        FieldNode node = batch.nodes(n);
        if (node.length() < 0 || node.length() > Integer.MAX_VALUE || node.nullCount() < 0 || node.nullCount() > node.length()) {
          throw new UserException(file + " has a batch at " + block.getOffset() + " whose column node " + n + " claims "
              + node.length() + " values and " + node.nullCount() + " nulls");
        }
      }
      for (int b = 0; b < batch.buffersLength(); b++) {
        Buffer buffer = batch.buffers(b);
        if (buffer.offset() < 0 || buffer.length() < 0 || buffer.offset() + buffer.length() > block.getBodyLength()
            || buffer.offset() + buffer.length() < 0) {
          throw new UserException(file + " has a batch at " + block.getOffset() + " whose buffer " + b + " (at "
              + buffer.offset() + ", " + buffer.length() + " bytes) lies outside its body of " + block.getBodyLength()
              + " bytes");
        }
      }
      return (int) rows;
    } catch (IndexOutOfBoundsException e) {
      // a flatbuffer whose tables point outside the header
      throw new UserException(file + " has a damaged batch header at " + block.getOffset() + ": " + e, e);
    }
  }
}
