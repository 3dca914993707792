package io.datum.cdc;

import java.util.Objects;

/**
 * A table's schema-qualified name as PostgreSQL sent it in the Relation message (an empty namespace
 * there means {@code pg_catalog}; PostgreSQL docs, 55.9 Logical Replication Message Formats,
 * "Relation").
 *
 * @param schema the schema (namespace) name, not null
 * @param table the table name, not null
 */
public record TableId(String schema, String table) {

  /**
   * @throws NullPointerException if a part is null
   */
  public TableId {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(table, "table");
  }

  /**
   * Parses a table name as every datum-cdc input takes it (the tables of a publication the source
   * creates, {@code pgcdc --tables}, {@code pgcdc snapshot --table}, the Spring and Connect
   * options): {@code schema.table}, or {@code table} for schema {@code public}. A part in double
   * quotes is taken exactly, a doubled quote standing for one ({@code "Sales"."Orders 2024"}); an
   * unquoted part is taken as written, case-sensitive, as {@code pg_class} stores it (not folded to
   * lower case as SQL would). Spaces around the name are ignored.
   *
   * @param text the name, not null
   * @return the table
   * @throws CdcConfigurationException naming the text and the form if it is not of that form (an
   *     empty part, more than two parts, an unclosed quote, or characters after a quoted part)
   */
  public static TableId parse(String text) {
    Objects.requireNonNull(text, "text");
    String s = text.strip();
    java.util.List<String> parts = new java.util.ArrayList<>(2);
    int i = 0;
    int n = s.length();
    while (true) {
      StringBuilder part = new StringBuilder();
      if (i < n && s.charAt(i) == '"') {
        i++;
        boolean closed = false;
        while (i < n) {
          char c = s.charAt(i++);
          if (c == '"') {
            if (i < n && s.charAt(i) == '"') {
              part.append('"');
              i++;
            } else {
              closed = true;
              break;
            }
          } else {
            part.append(c);
          }
        }
        if (!closed || (i < n && s.charAt(i) != '.')) {
          throw malformed(text);
        }
      } else {
        while (i < n && s.charAt(i) != '.') {
          char c = s.charAt(i++);
          if (c == '"') {
            throw malformed(text);
          }
          part.append(c);
        }
      }
      if (part.length() == 0) {
        throw malformed(text);
      }
      parts.add(part.toString());
      if (i >= n) {
        break;
      }
      i++; // the dot
      if (parts.size() == 2) {
        throw malformed(text);
      }
    }
    return parts.size() == 1
        ? new TableId("public", parts.get(0))
        : new TableId(parts.get(0), parts.get(1));
  }

  private static CdcConfigurationException malformed(String text) {
    return new CdcConfigurationException(
        "table name \""
            + text
            + "\" is not schema.table or table (schema public): double-quote a part holding a dot,"
            + " a quote or spaces at its ends, as in SQL ('\"Sales\".\"Orders 2024\"'); an"
            + " unquoted part is taken as written, case-sensitive");
  }

  /** Returns {@code schema.table}, unquoted. */
  @Override
  public String toString() {
    return schema + '.' + table;
  }
}
