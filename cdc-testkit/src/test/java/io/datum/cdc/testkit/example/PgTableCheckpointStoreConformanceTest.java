package io.datum.cdc.testkit.example;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.CheckpointStoreConformanceKit;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** docs/stores.md's example: the conformance kit run against a store kept in a PostgreSQL table. */
@EmbeddedPostgresTest
class PgTableCheckpointStoreConformanceTest extends CheckpointStoreConformanceKit {
  private final EmbeddedPostgresServer pg;

  PgTableCheckpointStoreConformanceTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return PgTableCheckpointStore.open(
        pg.jdbcUrl(), table(directory)); // same directory, same table
  }

  @Override
  protected String uri(Path directory) {
    return null; // no CheckpointStoreProvider registered: the kit skips the child-JVM tests
  }

  @Override
  protected void corrupt(Path directory) {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
      c.createStatement()
          .execute(
              "UPDATE "
                  + table(directory)
                  + " SET value = overlay(value placing '\\x5a5a' from 8)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String table(Path directory) {
    return "checkpoints_" + Integer.toHexString(directory.hashCode());
  }
}
