package io.datum.cdc.core;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * A crash of the primary (immediate shutdown), then the standby's promotion: see {@link
 * FailoverScenario}.
 */
@EmbeddedPostgresTest(settings = {"wal_sender_timeout=10s", "log_connections=on"})
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FailoverTest extends FailoverScenario {

  FailoverTest(EmbeddedPostgresServer primary) {
    super(primary);
  }

  @Override
  EmbeddedPostgresServer.ShutdownMode shutdown() {
    return EmbeddedPostgresServer.ShutdownMode.IMMEDIATE;
  }
}
