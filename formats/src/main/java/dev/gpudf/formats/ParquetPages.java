package dev.gpudf.formats;

import dev.gpudf.columnar.DataType;
import dev.gpudf.columnar.error.UserException;
import dev.gpudf.kernels.ParquetDecode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.PageHeader;

/**
 * A Parquet column's stored pages read from its file for the device's decoder ({@link
 * ParquetDecode}): the column chunks' bytes, and their page headers checked against the chunks
 * and against what the decoder takes. Shared by the readers that hand columns over so: a table's
 * chunks ({@link ParquetSource}) and a byte range's row groups ({@link ParquetRowGroups}).
 */
public final class ParquetPages {
  private ParquetPages() {}

  /**
   * One column over consecutive row groups as its stored pages, for the device to decode ({@link
   * ParquetDecode}): {@code stored} is the column's chunk in each row group, the first of which is
   * row group {@code firstGroup} of {@code stamp}'s file; {@code rows} their rows. Read into {@code
   * into} (pinned memory goes to the device with no staging copy); the caller closes it. Null when
   * the device cannot decode it: a row group whose footer names something the decoder does not take
   * ({@code stored} has a null), or page headers that do (another encoding, version-2 pages, strings
   * whose data pages are of both kinds). A page header that cannot be read or does not fit its
   * column chunk is a {@link UserException} naming the row group; so is a file that changed since
   * {@code stamp} was taken.
   */
  public static ParquetDecode.Chunk read(FileStamp stamp, List<ParquetFooter.Stored> stored, int firstGroup, String name,
      DataType type, int rows, BufferAllocator into) {
    Path file = stamp.file();
    if (stored.isEmpty()) {
      return null;
    }
    long total = 0;
    for (ParquetFooter.Stored s : stored) {
      if (s == null) {
        return null;
      }
      total += s.bytes();
    }
    stamp.check();
    ArrowBuf buf = into.buffer(Math.max(1, total));
    try {
      List<ParquetDecode.Page> pages = new ArrayList<>();
      List<Integer> pageGroups = new ArrayList<>();
      try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ)) {
        List<RangeReads.Range> ranges = new ArrayList<>();
        long at = 0;
        for (int k = 0; k < stored.size(); k++) {
          ParquetFooter.Stored s = stored.get(k);
          ranges.add(new RangeReads.Range(s.start(), at, s.bytes(), firstGroup + k));
          at += s.bytes();
        }
        RangeReads.read(ch, buf, ranges, g -> new UserException(file + " ended inside row group " + g + " column "
            + name + ": it changed since it was opened"));
        for (RangeReads.Range r : ranges) {
          if (!pages(file, buf, r.into(), stored.get(r.part() - firstGroup), r.part(), name, pages, pageGroups)) {
            buf.close();
            return null;
          }
        }
        // strings' PLAIN pages beside dictionary ones (a writer's fallback once a dictionary
        // grows large), say, are Arrow's to decode
        if (!ParquetDecode.takes(pages, stored.get(0).width(), rows)) {
          buf.close();
          return null;
        }
      }
      // what was read is what was opened, or the query fails: never a mix of two versions
      stamp.check();
      return new ParquetDecode.Chunk(buf, pages, type, stored.get(0).width(), rows,
          p -> file + " row group " + pageGroups.get(p) + " column " + name);
    } catch (IOException e) {
      buf.close();
      throw new UserException("cannot read Parquet file " + file + " (row group " + firstGroup + " on): " + e.getMessage(), e);
    } catch (RuntimeException e) {
      buf.close();
      throw e;
    }
  }

  /**
   * Adds the pages of column chunk {@code s} (row group {@code group} of {@code file}), whose
   * bytes are at {@code at} of {@code buf}, to {@code pages}; false when one is of a kind the device does not decode.
   */
  private static boolean pages(Path file, ArrowBuf buf, long at, ParquetFooter.Stored s, int group, String name,
      List<ParquetDecode.Page> pages, List<Integer> pageGroups) {
    long end = at + s.bytes();
    long off = at;
    int dictionary = -1;
    // each page takes at least its header's byte, so the loop ends
    while (off < end) {
      PageHeader h;
      BufInput in = new BufInput(buf, off, end);
      try {
        h = org.apache.parquet.format.Util.readPageHeader(in);
      } catch (IOException | RuntimeException e) {
        throw new UserException(file + " row group " + group + " column " + name
            + ": a page header at byte " + (s.start() + off - at) + " cannot be read (" + e.getMessage() + ")", e);
      }
      long payload = in.position();
      long size = h.getCompressed_page_size();
      if (size < 0 || size > end - payload || h.getUncompressed_page_size() < 0) {
        throw new UserException(file + " row group " + group + " column " + name
            + ": the page at byte " + (s.start() + off - at) + " runs past its column chunk");
      }
      ParquetDecode.Page page;
      switch (h.getType()) {
        case DICTIONARY_PAGE -> {
          if (!h.isSetDictionary_page_header() || !plain(h.getDictionary_page_header().getEncoding())) {
            return false;
          }
          page = new ParquetDecode.Page(payload, size, h.getUncompressed_page_size(),
              h.getDictionary_page_header().getNum_values(), ParquetDecode.Kind.DICTIONARY, s.codec(), false, -1);
          dictionary = pages.size();
        }
        case DATA_PAGE -> {
          if (!h.isSetData_page_header()) {
            return false;
          }
          DataPageHeader d = h.getData_page_header();
          ParquetDecode.Kind kind = d.getEncoding() == Encoding.PLAIN ? ParquetDecode.Kind.PLAIN
              : d.getEncoding() == Encoding.PLAIN_DICTIONARY || d.getEncoding() == Encoding.RLE_DICTIONARY
              ? ParquetDecode.Kind.DICTIONARY_INDEXES : null;
          if (kind == null || s.optional() && d.getDefinition_level_encoding() != Encoding.RLE) {
            return false;
          }
          page = new ParquetDecode.Page(payload, size, h.getUncompressed_page_size(), d.getNum_values(), kind, s.codec(),
              s.optional(), kind == ParquetDecode.Kind.DICTIONARY_INDEXES ? dictionary : -1);
        }
        case INDEX_PAGE -> page = null;
        default -> {
          return false;
        }
      }
      if (page != null) {
        pages.add(page);
        pageGroups.add(group);
      }
      off = payload + size;
    }
    return true;
  }

  private static boolean plain(Encoding e) {
    return e == Encoding.PLAIN || e == Encoding.PLAIN_DICTIONARY;
  }

  /** Bytes {@code [from, end)} of a buffer as a stream, for the Thrift reader; it reads nothing past {@code end}. */
  private static final class BufInput extends java.io.InputStream {
    private final ArrowBuf buf;
    private final long end;
    private long at;

    BufInput(ArrowBuf buf, long from, long end) {
      this.buf = buf;
      this.at = from;
      this.end = end;
    }

    long position() {
      return at;
    }

    @Override
    public int read() {
      return at < end ? buf.getByte(at++) & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      if (at >= end) {
        return -1;
      }
      int n = (int) Math.min(len, end - at);
      buf.getBytes(at, b, off, n);
      at += n;
      return n;
    }
  }

}
