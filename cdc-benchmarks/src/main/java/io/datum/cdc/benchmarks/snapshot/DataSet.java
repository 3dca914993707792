package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The tables the snapshots copy, generated once per harness run on the server: {@code big} with
 * {@code rows} rows, and {@code t01..t20} of the same shape with {@code rows / 20} rows each.
 */
final class DataSet {
  static final int SMALL_TABLES = 20;

  /** The shape of every table: ten columns of ten types, one of them nullable. */
  private static final String COLUMNS =
      "(id bigint NOT NULL, qty int NOT NULL, label text NOT NULL, amount numeric(12,2) NOT NULL,"
          + " created_at timestamptz NOT NULL, active boolean NOT NULL, ref uuid NOT NULL,"
          + " attrs jsonb NOT NULL, score double precision NOT NULL, note varchar(64))";

  /**
   * Row {@code g}: a 30 to 100 character text, about a quarter of {@code note}s null, a jsonb of
   * three keys (about 40 bytes as text).
   */
  private static final String SELECT =
      "SELECT g, (g * 7919) % 100000, left(repeat(md5(g::text), 4), 30 + (g % 71)::int),"
          + " ((g * 37) % 10000000) / 100.0, timestamptz '2024-01-01 00:00:00+00' + g *"
          + " interval '1 second', g % 3 = 0, md5(g::text || 'u')::uuid,"
          + " jsonb_build_object('k', g % 1000, 'tag', 'v' || (g % 17), 'ok', g % 2 = 0),"
          + " g * 1.0000001 / 7, CASE WHEN g % 4 = 0 THEN NULL ELSE 'note ' || g END";

  final long rows;
  final long rowsPerSmallTable;

  DataSet(long rows) {
    this.rows = rows;
    this.rowsPerSmallTable = rows / SMALL_TABLES;
  }

  /** The tables of a scenario. */
  static List<String> tables(String scenario) {
    if (scenario.equals("one")) {
      return List.of("big");
    }
    List<String> t = new ArrayList<>();
    for (int i = 1; i <= SMALL_TABLES; i++) {
      t.add(String.format(Locale.ROOT, "t%02d", i));
    }
    return t;
  }

  /** The rows in a scenario's tables. */
  long expectedRows(String scenario) {
    return scenario.equals("one") ? rows : rowsPerSmallTable * SMALL_TABLES;
  }

  /** The rows of one table. */
  long rowsOf(String table) {
    return table.equals("big") ? rows : rowsPerSmallTable;
  }

  /**
   * Creates and fills the tables (big on one connection, the 20 on another, at the same time), then
   * VACUUM (FREEZE, ANALYZE) and CHECKPOINT, so that no reader sets hint bits.
   */
  void generate(EmbeddedPostgresServer pg) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?> big = pool.submit(() -> fill(pg, List.of("big")));
      Future<?> small = pool.submit(() -> fill(pg, tables("twenty")));
      big.get();
      small.get();
    } finally {
      pool.shutdown();
    }
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      s.execute("VACUUM (FREEZE, ANALYZE)");
      s.execute("CHECKPOINT");
    }
  }

  private Void fill(EmbeddedPostgresServer pg, List<String> tables) throws SQLException {
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      s.execute("SET synchronous_commit = off");
      for (String t : tables) {
        s.execute("DROP TABLE IF EXISTS " + t);
        s.execute("CREATE TABLE " + t + " " + COLUMNS);
        s.execute(
            "INSERT INTO "
                + t
                + " "
                + SELECT
                + " FROM generate_series(1::bigint, "
                + rowsOf(t)
                + ") g");
        s.execute("ALTER TABLE " + t + " ADD PRIMARY KEY (id)");
      }
    }
    return null;
  }
}
