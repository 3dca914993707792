package io.datum.cdc.core;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;

/**
 * The pgoutput behaviours datum-cdc relies on, on PostgreSQL 14, 15, 16, 17 and 18: each version
 * once, on one server shared by the nested groups (each test uses slots, publications and tables of
 * its own names). What a version cannot do is skipped with an assumption; an option asked of a
 * version too old for it is asserted to be refused. The server streams transactions past 64 kB
 * ({@code logical_decoding_work_mem}) and allows prepared transactions.
 *
 * <ul>
 *   <li>{@link ProtocolMatrix}: protocol negotiation and refusals, streaming, two-phase, messages,
 *       replication origins.
 *   <li>{@link RowImageMatrix}: key and before per replica identity, unchanged TOAST, binary
 *       format.
 *   <li>{@link SchemaMatrix}: DDL between and inside transactions, partitions, generated columns.
 * </ul>
 */
@EmbeddedPostgresVersions({14, 15, 16, 17, 18})
@EmbeddedPostgresTest(settings = {"logical_decoding_work_mem=64kB", "max_prepared_transactions=10"})
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PgVersionMatrixTest {

  /** Protocol negotiation, streaming, two-phase, messages, origins. */
  @Nested
  class Protocol extends ProtocolMatrix {
    Protocol(EmbeddedPostgresServer pg) {
      super(pg);
    }
  }

  /** Replica identities, unchanged TOAST, binary format. */
  @Nested
  class RowImages extends RowImageMatrix {
    RowImages(EmbeddedPostgresServer pg) {
      super(pg);
    }
  }

  /** Schema changes, partitions, generated columns. */
  @Nested
  class Schema extends SchemaMatrix {
    Schema(EmbeddedPostgresServer pg) {
      super(pg);
    }
  }
}
