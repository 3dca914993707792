package io.datum.cdc.core.types;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;

/**
 * Reads PostgreSQL's binary array format ({@code array_send}, src/backend/utils/adt/arrayfuncs.c):
 * {@code int32 ndim} (0 for an empty array, at most {@value #MAXDIM}), {@code int32 flags} (1 if
 * the array has NULLs, else 0), {@code int32} element type oid, then per dimension {@code int32}
 * length and {@code int32} lower bound, then every element in row-major order as {@code int32}
 * length ({@code -1} for NULL) followed by that many bytes of the element type's send format.
 *
 * <p>Two results: {@link #decodeList} gives the nested unmodifiable {@link List} that {@link
 * PgArrayValues} gives for the same array's text (lower bounds dropped, NULL elements as null);
 * {@link #renderText} gives the text {@code array_out} prints, for arrays that {@link PgTextValues}
 * keeps as a String. Malformed input raises {@link IllegalArgumentException}.
 */
final class PgBinaryArrays {

  /** The most dimensions an array can have ({@code MAXDIM}, src/include/utils/array.h). */
  static final int MAXDIM = 6;

  private PgBinaryArrays() {}

  /** An array's header and the array index and length of each element (length -1: NULL). */
  record Elements(int[] dims, int[] lowerBounds, int[] starts, int[] lengths) {}

  /**
   * Reads the header and locates every element; checks that the whole value is consumed.
   *
   * @param c the value
   * @param elementOid the element type oid the array type implies; the header must name it
   * @return the elements, not yet decoded
   * @throws IllegalArgumentException if the header or an element length is malformed
   */
  static Elements read(PgBinaryCursor c, int elementOid) {
    return read(c, elementOid, elementOid);
  }

  /**
   * Like {@link #read(PgBinaryCursor, int)}, accepting either of two element type oids in the
   * header: an array of a domain may carry the domain's oid or its base type's.
   */
  static Elements read(PgBinaryCursor c, int elementOid, int alternateOid) {
    int ndim = c.i32("array dimension count");
    if (ndim < 0 || ndim > MAXDIM) {
      throw new IllegalArgumentException(
          "array has " + ndim + " dimensions; between 0 and " + MAXDIM + " expected");
    }
    int flags = c.i32("array flags");
    if (flags != 0 && flags != 1) {
      throw new IllegalArgumentException("array flags are " + flags + "; 0 or 1 expected");
    }
    int sentElement = c.i32("array element type");
    if (sentElement != elementOid && sentElement != alternateOid) {
      throw new IllegalArgumentException(
          "array element type oid is "
              + Integer.toUnsignedString(sentElement)
              + " but the array type's element type is "
              + elementOid);
    }
    int[] dims = new int[ndim];
    int[] lowerBounds = new int[ndim];
    long count = ndim == 0 ? 0 : 1;
    for (int d = 0; d < ndim; d++) {
      dims[d] = c.i32("array dimension length");
      lowerBounds[d] = c.i32("array lower bound");
      if (dims[d] < 0) {
        throw new IllegalArgumentException("array dimension " + (d + 1) + " has length " + dims[d]);
      }
      count *= dims[d];
      // every element takes at least its 4-byte length: a header claiming more cannot be true
      if (count > c.remaining() / 4) {
        throw new IllegalArgumentException(
            "array header claims at least "
                + count
                + " elements but only "
                + c.remaining()
                + " bytes follow it");
      }
    }
    int n = (int) count;
    int[] starts = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      int len = c.i32("length of array element " + (i + 1));
      if (len == -1) {
        lengths[i] = -1; // like array_recv, trust the -1 whatever the flags say
      } else {
        starts[i] = c.skip(len, "array element " + (i + 1));
        lengths[i] = len;
      }
    }
    c.expectEnd("array");
    return new Elements(dims, lowerBounds, starts, lengths);
  }

  /**
   * Decodes an array to nested Lists, as {@link PgArrayValues#parse} does for its text.
   *
   * @param c the value
   * @param elementOid the element type oid
   * @return an unmodifiable List (nested for several dimensions; empty for an empty array)
   * @throws IllegalArgumentException if the array or an element is malformed
   */
  static List<Object> decodeList(PgBinaryCursor c, int elementOid) {
    Elements e = read(c, elementOid);
    Object[] values = new Object[e.starts.length];
    for (int i = 0; i < values.length; i++) {
      if (e.lengths[i] >= 0) {
        try {
          values[i] = PgBinaryValues.decode(elementOid, c.array(), e.starts[i], e.lengths[i]);
        } catch (RuntimeException ex) {
          throw elementFailure(i, ex);
        }
      }
    }
    if (values.length == 0) {
      return List.of();
    }
    return nest(values, e.dims, 0, 0);
  }

  /**
   * Decodes an array of a user type to nested Lists of its element codec's values.
   *
   * @param c the value
   * @param elementOid the element type oid
   * @param alternateOid the other element oid the header may carry (see {@link
   *     #read(PgBinaryCursor, int, int)})
   * @param element decodes each element
   * @return an unmodifiable List (nested for several dimensions; empty for an empty array)
   * @throws IllegalArgumentException if the array or an element is malformed
   */
  static List<Object> decodeList(
      PgBinaryCursor c, int elementOid, int alternateOid, PgBinaryCodec element) {
    Elements e = read(c, elementOid, alternateOid);
    Object[] values = new Object[e.starts.length];
    for (int i = 0; i < values.length; i++) {
      if (e.lengths[i] >= 0) {
        try {
          values[i] = element.value(c.array(), e.starts[i], e.lengths[i]);
        } catch (RuntimeException ex) {
          throw elementFailure(i, ex);
        }
      }
    }
    if (values.length == 0) {
      return List.of();
    }
    return nest(values, e.dims, 0, 0);
  }

  private static IllegalArgumentException elementFailure(int i, RuntimeException ex) {
    return new IllegalArgumentException("array element " + (i + 1) + ": " + ex.getMessage(), ex);
  }

  /** Groups the flat elements starting at {@code from} by the dimensions from {@code d} on. */
  private static List<Object> nest(Object[] values, int[] dims, int d, int from) {
    int stride = 1;
    for (int k = d + 1; k < dims.length; k++) {
      stride *= dims[k];
    }
    List<Object> level = new ArrayList<>(dims[d]);
    for (int j = 0; j < dims[d]; j++) {
      if (d == dims.length - 1) {
        level.add(values[from + j]);
      } else {
        level.add(nest(values, dims, d + 1, from + j * stride));
      }
    }
    return Collections.unmodifiableList(level);
  }

  /**
   * Renders an array as {@code array_out} prints it: {@code {a,b}}, nested braces for several
   * dimensions, {@code [lb:ub]...=} in front when a lower bound is not 1, {@code {}} when empty,
   * {@code NULL} for NULL elements; an element is double-quoted (with {@code "} and {@code \}
   * backslash-escaped) when it is empty, equals {@code NULL} ignoring case, or holds {@code "},
   * {@code \}, a brace, the delimiter or white space ({@code array_isspace}).
   *
   * @param c the value
   * @param elementOid the element type oid
   * @param delimiter the element type's {@code typdelim}: {@code ;} for {@code box}, else {@code ,}
   * @return the text
   * @throws IllegalArgumentException if the array or an element is malformed or an element's type
   *     cannot be rendered
   */
  static String renderText(PgBinaryCursor c, int elementOid, char delimiter) {
    return renderText(c, elementOid, delimiter, e -> PgBinaryOutput.text(elementOid, e, null));
  }

  /**
   * Renders an array as {@code array_out} prints it, as {@link #renderText(PgBinaryCursor, int,
   * char)}, with a given element renderer.
   *
   * @param c the value
   * @param elementOid the element type oid the header must carry
   * @param delimiter the element type's {@code typdelim}
   * @param element renders one element's whole binary value as its output function's text
   * @return the text
   * @throws IllegalArgumentException if the array or an element is malformed
   */
  static String renderText(
      PgBinaryCursor c, int elementOid, char delimiter, Function<PgBinaryCursor, String> element) {
    return renderText(c, elementOid, elementOid, delimiter, element);
  }

  /**
   * Renders an array whose header may carry either of two element type oids (see {@link
   * #read(PgBinaryCursor, int, int)}).
   */
  static String renderText(
      PgBinaryCursor c,
      int elementOid,
      int alternateOid,
      char delimiter,
      Function<PgBinaryCursor, String> element) {
    Elements e = read(c, elementOid, alternateOid);
    int n = e.starts.length;
    if (n == 0) {
      return "{}";
    }
    String[] items = new String[n];
    for (int i = 0; i < n; i++) {
      if (e.lengths[i] < 0) {
        items[i] = "NULL";
      } else {
        try {
          String text = element.apply(new PgBinaryCursor(c.array(), e.starts[i], e.lengths[i]));
          items[i] = quoteIfNeeded(text, delimiter);
        } catch (RuntimeException ex) {
          throw elementFailure(i, ex);
        }
      }
    }
    StringBuilder sb = new StringBuilder();
    if (Arrays.stream(e.lowerBounds).anyMatch(lb -> lb != 1)) {
      for (int d = 0; d < e.dims.length; d++) {
        long upper = (long) e.lowerBounds[d] + e.dims[d] - 1;
        sb.append('[').append(e.lowerBounds[d]).append(':').append(upper).append(']');
      }
      sb.append('=');
    }
    appendLevel(sb, items, e.dims, 0, 0, delimiter);
    return sb.toString();
  }

  private static void appendLevel(
      StringBuilder sb, String[] items, int[] dims, int d, int from, char delimiter) {
    int stride = 1;
    for (int k = d + 1; k < dims.length; k++) {
      stride *= dims[k];
    }
    sb.append('{');
    for (int j = 0; j < dims[d]; j++) {
      if (j > 0) {
        sb.append(delimiter);
      }
      if (d == dims.length - 1) {
        sb.append(items[from + j]);
      } else {
        appendLevel(sb, items, dims, d + 1, from + j * stride, delimiter);
      }
    }
    sb.append('}');
  }

  static String quoteIfNeeded(String s, char delimiter) {
    boolean quote = s.isEmpty() || s.equalsIgnoreCase("NULL");
    for (int i = 0; i < s.length() && !quote; i++) {
      char ch = s.charAt(i);
      quote =
          ch == '"'
              || ch == '\\'
              || ch == '{'
              || ch == '}'
              || ch == delimiter
              || ch == ' '
              || ch == '\t'
              || ch == '\n'
              || ch == '\r'
              || ch == 0x0B
              || ch == '\f';
    }
    if (!quote) {
      return s;
    }
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') {
        sb.append('\\');
      }
      sb.append(ch);
    }
    return sb.append('"').toString();
  }
}
