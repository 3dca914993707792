package io.datum.cdc.benchmarks.e2e;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * The three workloads, each written to a fresh table {@code t} before the consumer starts, so the
 * consumer measures the consumption of a backlog. Sizes are the at scale 1. Public for the
 * Kafka Connect benchmark (cdc-kafka-connect-benchmarks), which runs the same workloads.
 */
public enum Workload {
  /** One transaction of 1,000,000 inserted rows. */
  A("one transaction of 1,000,000 inserts") {
    @Override
    public void create(Statement s, String t, double scale) throws SQLException {
      s.execute(
          "CREATE TABLE " + t + " (id bigint PRIMARY KEY, n int NOT NULL, s text, ts timestamptz)");
    }

    @Override
    public void write(Statement s, String t, double scale) throws SQLException {
      long rows = Math.max(1, Math.round(1_000_000 * scale));
      s.execute(
          "INSERT INTO "
              + t
              + " SELECT g, g % 1000, md5(g::text), now() FROM generate_series(1, "
              + rows
              + ") g");
    }
  },
  /** 100,000 transactions of 1 to 10 inserted rows each (5.5 on average, deterministic). */
  B("100,000 transactions of 1 to 10 inserts") {
    @Override
    public void create(Statement s, String t, double scale) throws SQLException {
      A.create(s, t, scale);
    }

    @Override
    public void write(Statement s, String t, double scale) throws SQLException {
      long txs = Math.max(1, Math.round(100_000 * scale));
      s.execute(
          "DO $$ DECLARE k bigint := 0; r int; BEGIN FOR i IN 1.."
              + txs
              + " LOOP"
              + " r := 1 + (i * 7) % 10;"
              + " INSERT INTO "
              + t
              + " SELECT k + g, g, md5((k + g)::text), now() FROM generate_series(1, r) g;"
              + " k := k + r; COMMIT; END LOOP; END $$");
    }
  },
  /**
   * 20,000 updates (in transactions of 100) of rows whose {@code doc} column holds 20 kB stored out
   * of line (TOAST, {@code STORAGE EXTERNAL}: not compressed); each update changes {@code n} and
   * rewrites {@code doc}, so every event carries 20 kB. The table holds 2,000 rows (written before
   * the slot, so not streamed).
   */
  C("20,000 updates of rows with a 20 kB TOASTed column") {
    @Override
    public void create(Statement s, String t, double scale) throws SQLException {
      s.execute("CREATE TABLE " + t + " (id int PRIMARY KEY, n int NOT NULL, doc text)");
      s.execute("ALTER TABLE " + t + " ALTER COLUMN doc SET STORAGE EXTERNAL");
      s.execute(
          "INSERT INTO "
              + t
              + " SELECT g, 0, repeat(md5(g::text), 625) FROM generate_series(1, "
              + rows(scale)
              + ") g");
    }

    @Override
    public void write(Statement s, String t, double scale) throws SQLException {
      long updates = Math.max(100, Math.round(20_000 * scale) / 100 * 100);
      long rows = rows(scale);
      s.execute(
          "DO $$ BEGIN FOR j IN 0.."
              + (updates / 100 - 1)
              + " LOOP"
              + " UPDATE "
              + t
              + " SET n = n + 1, doc = overlay(doc placing md5(random()::text) from 1)"
              + " WHERE id > (j * 100) % "
              + rows
              + " AND id <= (j * 100) % "
              + rows
              + " + 100;"
              + " COMMIT; END LOOP; END $$");
    }

    private long rows(double scale) {
      return Math.max(100, Math.round(2_000 * scale) / 100 * 100);
    }
  };

  /** What the workload writes at scale 1, for logs and reports. */
  public final String description;

  Workload(String description) {
    this.description = description;
  }

  /** Creates the table (and, for C, its rows, before the slot exists). */
  public abstract void create(Statement s, String table, double scale) throws SQLException;

  /** Writes the workload that is streamed. */
  public abstract void write(Statement s, String table, double scale) throws SQLException;

  /** The number of row events the workload produced, once written. */
  public String expectedEventsSql(String table) {
    return this == C ? "SELECT sum(n) FROM " + table : "SELECT count(*) FROM " + table;
  }

  /** Returns the workload of a name, case-insensitive ({@code a}, {@code B}, ...). */
  public static Workload of(String name) {
    return valueOf(name.trim().toUpperCase(Locale.ROOT));
  }

  static void run(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
