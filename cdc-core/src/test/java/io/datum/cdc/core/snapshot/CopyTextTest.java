package io.datum.cdc.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** COPY's text format without a server: splitting a row into fields, NULL, every escape. */
class CopyTextTest {

  /** Splits a row as CopyRows does: null for NULL, else the un-escaped text. */
  private static List<String> fields(String row) {
    byte[] line = row.getBytes(StandardCharsets.UTF_8);
    int end = line.length;
    if (end > 0 && line[end - 1] == '\n') {
      end--;
    }
    List<String> out = new ArrayList<>();
    int at = 0;
    while (true) {
      int raw = CopyText.fieldEnd(line, at, end);
      int fieldEnd = raw < 0 ? -raw - 1 : raw;
      if (raw < 0 && CopyText.isNull(line, at, fieldEnd)) {
        out.add(null);
      } else if (raw < 0) {
        byte[] buffer = new byte[fieldEnd - at];
        int n = CopyText.unescape(line, at, fieldEnd, buffer);
        out.add(new String(buffer, 0, n, StandardCharsets.UTF_8));
      } else {
        out.add(new String(line, at, fieldEnd - at, StandardCharsets.UTF_8));
      }
      if (fieldEnd >= end) {
        return out;
      }
      at = fieldEnd + 1;
    }
  }

  private static String unescape(String field) {
    byte[] in = field.getBytes(StandardCharsets.ISO_8859_1);
    byte[] out = new byte[in.length];
    int n = CopyText.unescape(in, 0, in.length, out);
    return new String(out, 0, n, StandardCharsets.ISO_8859_1);
  }

  @Test
  void everyControlEscapeOfCopyTo() {
    assertEquals("\b\f\n\r\t\u000b\\", unescape("\\b\\f\\n\\r\\t\\v\\\\"));
    assertEquals("a\tb\nc", unescape("a\\tb\\nc"));
  }

  @Test
  void octalAndHexEscapesOfCopyFrom() {
    assertEquals("A", unescape("\\101"));
    assertEquals("\u0001", unescape("\\1"));
    assertEquals("\u0008" + "9", unescape("\\109")); // two octal digits, then a 9
    assertEquals("S4", unescape("\\1234")); // at most three digits
    assertEquals("\u00ff", unescape("\\377"));
    assertEquals("\u0000", unescape("\\400")); // & 0377, as copyfromparse.c
    assertEquals("J", unescape("\\x4a"));
    assertEquals("\u000fg", unescape("\\xfg")); // one hex digit
    assertEquals("\u00abc", unescape("\\xabc")); // at most two
    assertEquals("xz", unescape("\\xz")); // no hex digit: the x itself
    assertEquals("x", unescape("\\x"));
  }

  @Test
  void aBackslashBeforeAnyOtherCharacterIsThatCharacter() {
    assertEquals("N.a\"", unescape("\\N\\.\\a\\\""));
    assertEquals("ab", unescape("ab\\")); // a trailing backslash is dropped
  }

  @Test
  void nullIsExactlyBackslashNAndEmptyIsNotNull() {
    assertEquals(Arrays.asList(null, "", "x"), fields("\\N\t\tx\n"));
    assertEquals(Arrays.asList("aNb", "\\NN", "\\N"), fields("a\\Nb\t\\\\N\\N\t\\\\\\N\n"));
    assertTrue(CopyText.isNull("\\N".getBytes(StandardCharsets.UTF_8), 0, 2));
    assertFalse(CopyText.isNull("\\\\".getBytes(StandardCharsets.UTF_8), 0, 2));
  }

  @Test
  void trailingAndEmptyFields() {
    assertEquals(Arrays.asList("a", ""), fields("a\t\n"));
    assertEquals(Arrays.asList("", ""), fields("\t\n"));
    assertEquals(List.of(""), fields("\n"));
    assertEquals(Arrays.asList("a", "b"), fields("a\tb")); // no newline at all
    assertEquals(Arrays.asList("a", null), fields("a\t\\N\n"));
  }

  @Test
  void anEscapedTabIsDataNotADelimiter() {
    assertEquals(List.of("a\tb"), fields("a\\\tb\n"));
    assertEquals(Arrays.asList("a\\", "b"), fields("a\\\\\tb\n"));
  }

  @Test
  void multiByteCharactersPassThrough() {
    assertEquals(Arrays.asList("très\tbien", "日本", "😀"), fields("très\\tbien\t日本\t😀\n"));
  }

  @Test
  void fieldEndFlagsEscapedFields() {
    byte[] line = "ab\tc\\td\n".getBytes(StandardCharsets.UTF_8);
    assertEquals(2, CopyText.fieldEnd(line, 0, line.length - 1));
    assertEquals(-(7) - 1, CopyText.fieldEnd(line, 3, line.length - 1));
  }
}
