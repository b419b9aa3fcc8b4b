package dev.gpudf.sql.files;

import dev.gpudf.columnar.error.UserException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Table names are identifiers, never paths: the file a table is saved to is named by encoding
 * every character but ASCII letters, digits, {@code _} and {@code -} and non-ASCII letters and
 * digits as {@code %XX} per UTF-8 byte, so no name can hold a separator, start with a dot or
 * reach outside its directory ({@code "../x"} is the file {@code %2E%2E%2Fx.arrow}). A loaded
 * file's stem decodes back; plain names ({@code lineitem}) are their own file names.
 */
public final class TableNames {
  /** The longest table name, in UTF-8 bytes: encoded three to one, with an extension, it fits a file name. */
  public static final int MAX_BYTES = 80;

  private TableNames() {}

  /** {@code name}, or a {@link UserException} when it is empty, too long or holds control characters. */
  public static String check(String name) {
    if (name.isEmpty()) {
      throw new UserException("a table name cannot be empty");
    }
    int bytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_BYTES) {
      throw new UserException("table name '" + name.substring(0, Math.min(name.length(), 40)) + "...' is " + bytes
          + " bytes long; at most " + MAX_BYTES + " are allowed");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        throw new UserException("table name has control character U+" + String.format("%04X", (int) c) + " at position "
            + (i + 1));
      }
    }
    return name;
  }

  /** The file name, without extension, that table {@code name} is saved under. */
  public static String fileStem(String name) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < name.length(); ) {
      int cp = name.codePointAt(i);
      if (cp < 128 ? Character.isLetterOrDigit(cp) || cp == '_' || cp == '-' : Character.isLetterOrDigit(cp)) {
        out.appendCodePoint(cp);
      } else {
        for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
          out.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
        }
      }
      i += Character.charCount(cp);
    }
    return out.toString();
  }

  /** The table name a file stem stands for: {@code %XX} decoded; a stem that is no valid encoding is its own name. */
  public static String tableName(String stem) {
    if (stem.indexOf('%') < 0) {
      return stem;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < stem.length(); i++) {
      int cp = stem.codePointAt(i);
      if (cp != '%') {
        bytes.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
        i += Character.charCount(cp) - 1;
        continue;
      }
      if (i + 2 >= stem.length() || Character.digit(stem.charAt(i + 1), 16) < 0 || Character.digit(stem.charAt(i + 2), 16) < 0) {
        return stem;
      }
      bytes.write(Character.digit(stem.charAt(i + 1), 16) * 16 + Character.digit(stem.charAt(i + 2), 16));
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      return stem;
    }
  }
}
