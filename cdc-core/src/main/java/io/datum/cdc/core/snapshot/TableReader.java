package io.datum.cdc.core.snapshot;

import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.event.Row;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads chunks of a table for both kinds of snapshot: a chunk is the next rows of a key range in
 * key order, at most {@code chunkRows} of them and about {@code chunkBytes} of row text ({@link
 * CopyRows}, one {@code COPY (SELECT ... ORDER BY key LIMIT n)} per chunk: an index range scan from
 * the chunk's start). A table without a chunk key is read with one COPY, cut into chunks as it
 * streams. Decodes as the stream of the source's current connection does: its type catalog, its
 * walsender session's TimeZone, its decode-error policy (SKIP keeps the raw value of a read row, as
 * RAW does: a row is never dropped).
 */
public final class TableReader {

  /** Receives the chunks of a table read whole. */
  public interface ChunkSink {
    /**
     * @param rows one chunk
     * @throws InterruptedException if the source is stopping
     */
    void chunk(ChunkRows rows) throws InterruptedException;
  }

  private final ValueFailure.Policy policy;

  /**
   * Per table, the row limit of its next chunk's query when its rows are so wide that chunkBytes
   * ends chunks before chunkRows: the rows a cut chunk read. Without it, each cut chunk's COPY
   * would still send (and {@link CopyRows#close} read and discard) up to chunkRows rows, the rest
   * of a range of wide rows again for every chunk of it.
   */
  private final ConcurrentHashMap<TableId, Integer> rowLimits = new ConcurrentHashMap<>();

  private volatile PgTypeCatalog types;
  private volatile String timeZone;

  /**
   * @param policy the source's decode-error policy
   */
  public TableReader(ValueFailure.Policy policy) {
    this.policy = policy == ValueFailure.Policy.SKIP ? ValueFailure.Policy.RAW : policy;
  }

  /**
   * Follows the source's current connection.
   *
   * @param types its type catalog, or null before PostgreSQL 14
   * @param timeZone its walsender session's TimeZone, or null
   */
  public void configure(PgTypeCatalog types, String timeZone) {
    this.types = types;
    this.timeZone = timeZone;
  }

  /** Returns the TimeZone values are printed in, or null for the server's default. */
  public String timeZone() {
    return timeZone;
  }

  /**
   * Sets a reading connection's session so that values print as the walsender prints them.
   *
   * @param c the connection, in auto-commit mode
   * @param timeZone the TimeZone, or null
   * @throws SQLException if a setting is refused
   */
  public static void prepareSession(Connection c, String timeZone) throws SQLException {
    CopyRows.prepareSession(c, timeZone);
  }

  /**
   * Returns every table the publication publishes, as the stream names them.
   *
   * @param c a connection
   * @param publication the publication
   * @return the tables
   * @throws SQLException if the catalog cannot be read
   * @throws io.datum.cdc.CdcConfigurationException if the publication does not exist
   */
  public List<SnapshotTable> publishedTables(Connection c, String publication) throws SQLException {
    return SnapshotCatalog.publishedTables(c, publication, types);
  }

  /**
   * Returns one published table.
   *
   * @param c a connection
   * @param publication the publication
   * @param table the table
   * @return its description
   * @throws SQLException if the catalog cannot be read
   * @throws io.datum.cdc.CdcConfigurationException if the publication does not publish it
   */
  public SnapshotTable describe(Connection c, String publication, TableId table)
      throws SQLException {
    return SnapshotCatalog.table(c, publication, table, types);
  }

  /**
   * Reads the next chunk of a key range.
   *
   * @param c the connection, in the chunk's transaction
   * @param table the table, with a chunk key
   * @param after the exclusive start, or null
   * @param through the inclusive end, or null
   * @param chunkRows rows at most
   * @param chunkBytes bytes of row text after which the chunk ends early
   * @param skip keys acknowledged before, read but not delivered
   * @return the chunk
   * @throws SQLException if reading fails
   */
  public ChunkRows read(
      Connection c,
      SnapshotTable table,
      List<String> after,
      List<String> through,
      int chunkRows,
      long chunkBytes,
      Set<List<String>> skip)
      throws SQLException {
    List<Row> rows = new ArrayList<>(Math.min(chunkRows, 1024));
    List<List<String>> keys = new ArrayList<>(Math.min(chunkRows, 1024));
    List<List<String>> skipped = List.of();
    List<String> last = null;
    long bytes = 0;
    boolean cut = false;
    boolean ends = true;
    int read = 0;
    int limit = Math.min(chunkRows, rowLimits.getOrDefault(table.table(), chunkRows));
    // one row more than the chunk takes: if it exists, the range goes on, else this chunk ends it
    // (so its last row can say it is the table's last, even when the range holds a multiple of
    // the limit); the extra row is not delivered and is read again by the next chunk
    try (CopyRows copy = CopyRows.open(c, table, after, through, limit + 1, policy)) {
      while (copy.next()) {
        if (read == limit) {
          ends = false;
          break;
        }
        read++;
        List<String> key = copy.chunkKeyTexts();
        last = key;
        if (!skip.isEmpty() && skip.contains(key)) {
          if (skipped.isEmpty()) {
            skipped = new ArrayList<>();
          }
          skipped.add(key);
        } else {
          rows.add(copy.row());
          keys.add(key);
        }
        copy.takeFailures();
        bytes += copy.lineLength();
        if (bytes >= chunkBytes) {
          cut = read < limit;
          ends = !copy.next(); // a peek, as above: the next row, if any, is not delivered
          break;
        }
      }
    }
    if (cut || (read == limit && limit < chunkRows)) {
      // rows as wide as these fill a chunk at about this count; when a whole limit fitted, the
      // rows got narrower: allow twice as many next time
      int next = cut ? read : (int) Math.min(chunkRows, 2L * limit);
      rowLimits.put(table.table(), Math.max(1, next));
    }
    return new ChunkRows(rows, keys, skipped, last == null ? after : last, ends);
  }

  /**
   * Reads a table without a chunk key whole, in chunks; their keys are null (no progress inside
   * such a table is kept: it is read again from the start if interrupted).
   *
   * @param c the connection, in the snapshot's transaction
   * @param table the table
   * @param chunkRows rows per chunk at most
   * @param chunkBytes bytes of row text per chunk at most
   * @param sink receives each chunk
   * @throws SQLException if reading fails
   * @throws InterruptedException if the sink is interrupted
   */
  public void readAll(
      Connection c, SnapshotTable table, int chunkRows, long chunkBytes, ChunkSink sink)
      throws SQLException, InterruptedException {
    try (CopyRows copy = CopyRows.open(c, table, null, null, 0, policy)) {
      List<Row> rows = new ArrayList<>();
      List<List<String>> keys = new ArrayList<>();
      long bytes = 0;
      boolean more = copy.next();
      while (more) {
        rows.add(copy.row());
        keys.add(null);
        copy.takeFailures();
        bytes += copy.lineLength();
        more = copy.next();
        if (!more || rows.size() >= chunkRows || bytes >= chunkBytes) {
          sink.chunk(new ChunkRows(rows, keys, List.of(), null, !more));
          rows = new ArrayList<>();
          keys = new ArrayList<>();
          bytes = 0;
        }
      }
      if (copy.count() == 0) {
        sink.chunk(new ChunkRows(List.of(), List.of(), List.of(), null, true));
      }
    }
  }

  /**
   * Picks keys that split a table into about {@code parts} ranges of similar row counts, from a
   * sample ({@code TABLESAMPLE SYSTEM}, PostgreSQL docs, SELECT) read at the caller's snapshot.
   *
   * @param c the connection, in the snapshot's transaction (a savepoint guards it)
   * @param table the table, with a chunk key
   * @param parts the ranges wanted, at least 2
   * @return inner bounds, ascending and distinct; empty if the table cannot be sampled
   * @throws SQLException if the connection fails
   */
  public List<List<String>> sampleBounds(Connection c, SnapshotTable table, int parts)
      throws SQLException {
    List<String> key = table.chunkKey();
    double rows = Math.max(1, table.reltuples());
    double percent = Math.min(100, Math.max(0.01, 100.0 * Math.max(200.0 * parts, 20_000) / rows));
    StringBuilder cols = new StringBuilder();
    StringBuilder texts = new StringBuilder();
    for (int i = 0; i < key.size(); i++) {
      String id = CopyRows.identifier(key.get(i));
      // qualified: ORDER BY a bare name would sort by the output column, the text
      cols.append(i == 0 ? "" : ", ").append("s.").append(id);
      texts.append(i == 0 ? "" : ", ").append("s.").append(id).append("::text");
    }
    String sql =
        "SELECT "
            + texts
            + " FROM "
            + (table.partitionedRoot() ? "" : "ONLY ")
            + CopyRows.identifier(table.table().schema())
            + '.'
            + CopyRows.identifier(table.table().table())
            + " s TABLESAMPLE SYSTEM ("
            + percent
            + ")"
            + (table.rowFilter() == null ? "" : " WHERE (" + table.rowFilter() + ")")
            + " ORDER BY "
            + cols;
    List<List<String>> sample = new ArrayList<>();
    try (Statement st = c.createStatement()) {
      st.execute("SAVEPOINT datum_cdc_sample");
      try (ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          List<String> k = new ArrayList<>(key.size());
          for (int i = 1; i <= key.size(); i++) {
            k.add(rs.getString(i));
          }
          sample.add(k);
        }
        st.execute("RELEASE SAVEPOINT datum_cdc_sample");
      } catch (SQLException e) {
        st.execute("ROLLBACK TO SAVEPOINT datum_cdc_sample");
        return List.of();
      }
    }
    List<List<String>> bounds = new ArrayList<>();
    for (int p = 1; p < parts && sample.size() >= parts; p++) {
      List<String> b = sample.get((int) ((long) p * sample.size() / parts));
      if (bounds.isEmpty() || !bounds.get(bounds.size() - 1).equals(b)) {
        bounds.add(b);
      }
    }
    return bounds;
  }
}
