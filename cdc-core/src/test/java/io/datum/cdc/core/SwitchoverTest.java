package io.datum.cdc.core;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * A planned switchover: the primary's fast shutdown (its walsenders send the WAL written so far and
 * wait for their clients), then the standby's promotion: see {@link FailoverScenario}.
 */
@EmbeddedPostgresTest(settings = {"wal_sender_timeout=10s", "log_connections=on"})
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SwitchoverTest extends FailoverScenario {

  SwitchoverTest(EmbeddedPostgresServer primary) {
    super(primary);
  }

  @Override
  EmbeddedPostgresServer.ShutdownMode shutdown() {
    return EmbeddedPostgresServer.ShutdownMode.FAST;
  }
}
