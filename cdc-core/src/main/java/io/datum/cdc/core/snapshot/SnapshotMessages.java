package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.TableId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The logical decoding messages ({@code pg_logical_emit_message}, PostgreSQL docs 9.28.6
 * Replication Management Functions) datum-cdc writes into the WAL for its snapshots, under the
 * prefix {@value #PREFIX}. Their content is one line of UTF-8 words separated by single spaces:
 *
 * <ul>
 *   <li>{@code watermark SLOT NONCE low|high CHUNK}: the low and high watermarks around one online
 *       chunk read; on PostgreSQL 17+ non-transactional and flushed, so decoded at their own WAL
 *       position (decode.c, {@code logicalmsg_decode}), before 17 transactional in a transaction of
 *       their own. NONCE names the source instance that wrote them; others ignore them.
 *   <li>{@code snapshot SLOT id=ID TABLE...}: a request to snapshot tables ({@code pgcdc
 *       snapshot}); transactional, so delivered in commit order, once committed. ID is the id its
 *       rows carry, chosen by the requester (the {@code id=} word may be missing: then the id is
 *       {@code request-} and the commit LSN of the message). TABLE is {@code schema.table}, each
 *       name double-quoted (with {@code ""} for a quote inside) when it holds anything but
 *       lower-case letters, digits and underscores.
 * </ul>
 *
 * <p>Every source reading the database's WAL receives every message; each acts only on those naming
 * its slot.
 */
public final class SnapshotMessages {

  /** The prefix of datum-cdc's messages. */
  public static final String PREFIX = "datum-cdc";

  private SnapshotMessages() {}

  /** A decoded message; exactly one of the two forms; {@code id} null but in a request with one. */
  record Parsed(
      String kind,
      String slot,
      String nonce,
      boolean low,
      long chunk,
      List<TableId> tables,
      String id) {}

  /**
   * Returns the content of a watermark message.
   *
   * @param slot the source's slot
   * @param nonce the source instance's nonce
   * @param low true for the low watermark
   * @param chunk the chunk's serial number
   * @return the content
   */
  static String watermark(String slot, String nonce, boolean low, long chunk) {
    return "watermark " + slot + ' ' + nonce + ' ' + (low ? "low" : "high") + ' ' + chunk;
  }

  /**
   * Returns the content of a snapshot request.
   *
   * @param slot the slot whose source is to snapshot the tables
   * @param id the snapshot's id, without spaces
   * @param tables the tables, at least one
   * @return the content
   * @throws IllegalArgumentException if no table is given or the id holds a space
   */
  public static String request(String slot, String id, List<TableId> tables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("a snapshot request names at least one table");
    }
    if (id.isEmpty() || id.indexOf(' ') >= 0) {
      throw new IllegalArgumentException("a snapshot id is one word, was \"" + id + '"');
    }
    StringBuilder b = new StringBuilder("snapshot ").append(slot).append(" id=").append(id);
    for (TableId t : tables) {
      b.append(' ').append(quote(t.schema())).append('.').append(quote(t.table()));
    }
    return b.toString();
  }

  /**
   * Parses a message of prefix {@link #PREFIX}.
   *
   * @param content the message content
   * @return the message
   * @throws CdcConfigurationException naming the content if it is neither form
   */
  static Parsed parse(byte[] content) {
    String text = new String(content, StandardCharsets.UTF_8);
    String[] words = text.split(" ", 3);
    if (words.length >= 3 && words[0].equals("watermark")) {
      String[] rest = words[2].split(" ");
      if (rest.length == 3 && (rest[1].equals("low") || rest[1].equals("high"))) {
        try {
          return new Parsed(
              "watermark",
              words[1],
              rest[0],
              rest[1].equals("low"),
              Long.parseLong(rest[2]),
              List.of(),
              null);
        } catch (NumberFormatException e) {
          throw malformed(text);
        }
      }
    } else if (words.length == 3 && words[0].equals("snapshot")) {
      String list = words[2];
      String id = null;
      if (list.startsWith("id=")) {
        int end = list.indexOf(' ');
        if (end < 0 || end == 3) {
          throw malformed(text);
        }
        id = list.substring(3, end);
        list = list.substring(end + 1);
      }
      return new Parsed("snapshot", words[1], null, false, 0, tables(list, text), id);
    }
    throw malformed(text);
  }

  /**
   * Parses a list of {@code schema.table} names separated by spaces (the form {@link #request}
   * writes, also what {@code pgcdc snapshot --table} takes), unquoting quoted names.
   *
   * @param list the names
   * @param whole the whole text, for errors
   * @return the tables, at least one
   * @throws CdcConfigurationException naming the text if a name is malformed
   */
  static List<TableId> tables(String list, String whole) {
    List<TableId> tables = new ArrayList<>();
    int i = 0;
    int n = list.length();
    while (i < n) {
      StringBuilder schema = new StringBuilder();
      i = name(list, i, schema, whole);
      if (i >= n || list.charAt(i) != '.') {
        throw malformed(whole);
      }
      StringBuilder table = new StringBuilder();
      i = name(list, i + 1, table, whole);
      tables.add(new TableId(schema.toString(), table.toString()));
      if (i < n) {
        if (list.charAt(i) != ' ') {
          throw malformed(whole);
        }
        i++;
      }
    }
    if (tables.isEmpty()) {
      throw malformed(whole);
    }
    return tables;
  }

  /**
   * Parses one table name as every input takes it ({@link TableId#parse}).
   *
   * @param qualified the name
   * @return the table
   * @throws CdcConfigurationException naming the text if it is not of that form
   */
  public static TableId table(String qualified) {
    return TableId.parse(qualified);
  }

  private static int name(String s, int i, StringBuilder out, String whole) {
    int n = s.length();
    if (i < n && s.charAt(i) == '"') {
      i++;
      while (true) {
        if (i >= n) {
          throw malformed(whole);
        }
        char c = s.charAt(i++);
        if (c == '"') {
          if (i < n && s.charAt(i) == '"') {
            out.append('"');
            i++;
          } else {
            break;
          }
        } else {
          out.append(c);
        }
      }
    } else {
      while (i < n && s.charAt(i) != '.' && s.charAt(i) != ' ') {
        char c = s.charAt(i++);
        if (c == '"') {
          throw malformed(whole);
        }
        out.append(c);
      }
    }
    if (out.length() == 0) {
      throw malformed(whole);
    }
    return i;
  }

  private static String quote(String name) {
    if (!name.isEmpty()
        && name.chars()
            .allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return name;
    }
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  private static CdcConfigurationException malformed(String text) {
    String shown = text.length() > 200 ? text.substring(0, 200) + "..." : text;
    return new CdcConfigurationException(
        "not a datum-cdc snapshot message (prefix "
            + PREFIX
            + "): \""
            + shown
            + "\"; expected \"snapshot SLOT schema.table ...\" or \"watermark ...\"");
  }
}
