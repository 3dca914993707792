package io.datum.cdc.core.snapshot;

import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

/**
 * A measurement, not a test: rows per second of {@link CopyRows} on a table of a million rows
 * against pgjdbc's {@code copyOut} of the same table to a null sink. Runs only with {@code
 * -Ddatum.cdc.snapshot.measure=true} (it starts no server otherwise); asserts nothing, prints the
 * rates (the first rounds include the JIT's warm-up):
 *
 * <pre>{@code
 * ./mvnw -B -ntp -o -pl cdc-core verify -Dit.test=CopyRowsThroughputTest -Dtest=none \
 *   -Dsurefire.failIfNoSpecifiedTests=false -Ddatum.cdc.snapshot.measure=true
 * }</pre>
 */
@EnabledIfSystemProperty(named = "datum.cdc.snapshot.measure", matches = "true")
@EmbeddedPostgresTest
class CopyRowsThroughputTest {

  private static final int ROWS = 1_000_000;

  private final EmbeddedPostgresServer pg;

  CopyRowsThroughputTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void measure() throws Exception {
    pg.execute(
        "CREATE TABLE wide (id bigint PRIMARY KEY, a int, b text, c timestamptz, d numeric,"
            + " e boolean, f double precision, g uuid)",
        "INSERT INTO wide SELECT i, i % 1000, 'name ' || i || E'\\tx', now() - i * interval '1 s',"
            + " i / 7.0, i % 2 = 0, i * 1.1, md5(i::text)::uuid FROM generate_series(1, "
            + ROWS
            + ") i",
        "VACUUM ANALYZE wide",
        "CREATE PUBLICATION wide FOR TABLE wide");
    try (Connection c = pg.getConnection()) {
      CopyRows.prepareSession(c, null);
      SnapshotTable t =
          SnapshotCatalog.table(
              c, "wide", new TableId("public", "wide"), new PgTypeCatalog(pg::getConnection));
      String ordered = CopyRows.copyStatement(t, null, null, 0);
      for (int round = 0; round < 5; round++) {
        report("raw COPY wide TO STDOUT", raw(c, "COPY wide TO STDOUT"));
        report("raw " + ordered, raw(c, ordered));
        long start = System.nanoTime();
        long n = 0;
        try (CopyRows rows = CopyRows.open(c, t, null, null, 0, ValueFailure.Policy.STOP)) {
          while (rows.next()) {
            n += rows.row().size();
          }
        }
        report("CopyRows (decoded rows)", new long[] {ROWS, System.nanoTime() - start, n});
      }
    }
  }

  private static long[] raw(Connection c, String sql) throws SQLException {
    long start = System.nanoTime();
    CopyOut copy = c.unwrap(PGConnection.class).getCopyAPI().copyOut(sql);
    long rows = 0;
    long bytes = 0;
    byte[] line;
    while ((line = copy.readFromCopy()) != null) {
      rows++;
      bytes += line.length;
    }
    return new long[] {rows, System.nanoTime() - start, bytes};
  }

  private static void report(String what, long[] m) {
    System.out.printf(
        "%-60.60s %,10d rows in %6.0f ms: %,10.0f rows/s%n",
        what, m[0], m[1] / 1e6, m[0] / (m[1] / 1e9));
  }
}
