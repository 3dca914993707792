package io.datum.cdc.core.types;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Parses PostgreSQL's text output of arrays ({@code array_out}, src/backend/utils/adt/arrayfuncs.c;
 * PostgreSQL docs, 8.15.6 Array Input and Output Syntax): {@code {1,2,NULL}}, {@code
 * {{1,2},{3,4}}}, double-quoted elements with backslash escapes ({@code "NULL"} quoted is the
 * string NULL, unquoted {@code NULL} is SQL NULL), and the optional dimension decoration {@code
 * [0:1]={1,2}} (the bounds are dropped). The delimiter is the element type's {@code typdelim}: the
 * comma for every builtin type decoded here ({@code box}, whose delimiter is {@code ;}, is not
 * decoded as an array), the catalog's for arrays of user types.
 *
 * <p>The result is an unmodifiable {@link List} whose elements are decoded with {@link
 * PgTextValues#decode(int, String)} by the element type, nested Lists for several dimensions, null
 * for NULL elements.
 */
final class PgArrayValues {

  private final String s;
  private final int elementOid;
  private final char delimiter;
  private final PgBinaryCodec element;
  private int i;

  /** Whether the unquoted element read last had a backslash escape. */
  private boolean escaped;

  private PgArrayValues(String s, int elementOid, char delimiter, PgBinaryCodec element) {
    this.s = s;
    this.elementOid = elementOid;
    this.delimiter = delimiter;
    this.element = element;
  }

  /**
   * Parses an array.
   *
   * @param text the array's text output
   * @param elementOid the element type oid
   * @return the elements, nested for several dimensions
   * @throws IllegalArgumentException if the text is not an array or an element does not parse
   */
  static List<Object> parse(String text, int elementOid) {
    return parse(new PgArrayValues(text, elementOid, ',', null));
  }

  /**
   * Parses an array of a type decoded by a codec (arrays of user types, of the builtin ranges).
   *
   * @param text the array's text output
   * @param delimiter the element type's {@code typdelim}
   * @param element decodes each element's text ({@link PgBinaryCodec#textValue})
   * @return the elements, nested for several dimensions
   * @throws IllegalArgumentException if the text is not an array or an element does not parse
   */
  static List<Object> parse(String text, char delimiter, PgBinaryCodec element) {
    return parse(new PgArrayValues(text, 0, delimiter, element));
  }

  private static List<Object> parse(PgArrayValues parser) {
    String text = parser.s;
    parser.skipDimensions();
    List<Object> result = parser.level();
    parser.skipSpace();
    if (parser.i != text.length()) {
      throw parser.bad("unexpected text after the array");
    }
    return result;
  }

  private IllegalArgumentException bad(String what) {
    return new IllegalArgumentException(what + " at index " + i);
  }

  private void skipSpace() {
    while (i < s.length() && isArraySpace(s.charAt(i))) {
      i++;
    }
  }

  /**
   * The whitespace of PostgreSQL's array parser, {@code array_isspace} in arrayfuncs.c: space,
   * {@code \t}, {@code \n}, {@code \r}, {@code \v} and {@code \f} only. Java's {@link
   * Character#isWhitespace} also takes U+001C to U+001F and the Unicode separators, which {@code
   * array_out} does not quote: they are part of an element's text.
   */
  static boolean isArraySpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\013' || c == '\f';
  }

  /** Skips {@code [lo:hi][lo:hi]=} if present. */
  private void skipDimensions() {
    skipSpace();
    if (i >= s.length() || s.charAt(i) != '[') {
      return;
    }
    while (i < s.length() && s.charAt(i) == '[') {
      int close = s.indexOf(']', i);
      if (close < 0) {
        throw bad("unterminated dimension");
      }
      String bounds = s.substring(i + 1, close);
      if (!bounds.matches("-?\\d+(:-?\\d+)?")) {
        throw bad("bad dimension [" + bounds + "]");
      }
      i = close + 1;
    }
    if (i >= s.length() || s.charAt(i) != '=') {
      throw bad("expected '=' after the dimensions");
    }
    i++;
    skipSpace();
  }

  /** Parses {@code {...}} starting at the opening brace. */
  private List<Object> level() {
    if (i >= s.length() || s.charAt(i) != '{') {
      throw bad("expected '{'");
    }
    i++;
    skipSpace();
    if (i < s.length() && s.charAt(i) == '}') {
      i++;
      return List.of(); // as the binary decoder gives an empty array
    }
    List<Object> elements = new ArrayList<>();
    while (true) {
      skipSpace();
      if (i >= s.length()) {
        throw bad("unterminated array");
      }
      char c = s.charAt(i);
      if (c == '{') {
        elements.add(level());
      } else if (c == '"') {
        elements.add(decodeElement(quoted()));
      } else {
        String raw = unquoted();
        // array_in: only an unquoted NULL without backslashes is SQL NULL ("N\ULL" is the text)
        elements.add(raw.equalsIgnoreCase("NULL") && !escaped ? null : decodeElement(raw));
      }
      skipSpace();
      if (i >= s.length()) {
        throw bad("unterminated array");
      }
      char next = s.charAt(i++);
      if (next == '}') {
        return Collections.unmodifiableList(elements);
      } else if (next != delimiter) {
        i--;
        throw bad("expected '" + delimiter + "' or '}'");
      }
    }
  }

  private Object decodeElement(String text) {
    return element == null ? PgTextValues.decode(elementOid, text) : element.textValue(text);
  }

  private String quoted() {
    StringBuilder sb = new StringBuilder();
    for (i++; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"') {
        i++;
        return sb.toString();
      }
      if (c == '\\') {
        if (++i >= s.length()) {
          break;
        }
        c = s.charAt(i);
      }
      sb.append(c);
    }
    throw bad("unterminated quoted element");
  }

  private String unquoted() {
    StringBuilder sb = new StringBuilder();
    int lastSignificant = 0;
    escaped = false;
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == delimiter || c == '}') {
        break;
      } else if (c == '{' || c == '"') {
        throw bad("unexpected '" + c + "' in an unquoted element");
      } else if (c == '\\') {
        if (++i >= s.length()) {
          throw bad("backslash at the end");
        }
        sb.append(s.charAt(i));
        lastSignificant = sb.length();
        escaped = true;
      } else {
        sb.append(c);
        if (!isArraySpace(c)) {
          lastSignificant = sb.length();
        }
      }
    }
    if (lastSignificant == 0) {
      throw bad("empty unquoted element");
    }
    sb.setLength(lastSignificant);
    return sb.toString();
  }
}
