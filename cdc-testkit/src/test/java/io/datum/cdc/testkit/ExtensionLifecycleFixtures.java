package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Test classes that {@link EmbeddedPostgresExtensionLifecycleTest} runs through the JUnit launcher;
 * surefire does not run them itself (their names do not end in Test).
 */
final class ExtensionLifecycleFixtures {

  static final List<EmbeddedPostgresServer> SEEN = new CopyOnWriteArrayList<>();

  private ExtensionLifecycleFixtures() {}

  @EmbeddedPostgresTest
  static class Annotated {
    @Test
    void one(EmbeddedPostgresServer server) {
      SEEN.add(server);
    }

    @Test
    void two(EmbeddedPostgresServer server) {
      SEEN.add(server);
      assertSame(SEEN.get(0), server);
    }
  }

  static class Registered {
    @RegisterExtension
    static final EmbeddedPostgresExtension POSTGRES =
        new EmbeddedPostgresExtension(
            EmbeddedPostgresServer.builder().setting("cluster_name", "registered fixture"));

    @Test
    void usesTheBuilder(EmbeddedPostgresServer server) throws SQLException {
      SEEN.add(server);
      assertEquals("registered fixture", server.queryString("SHOW cluster_name"));
    }
  }

  @EmbeddedPostgresTest(settings = "no_equals_sign")
  static class BadSettings {
    @Test
    void neverRuns(EmbeddedPostgresServer server) {
      SEEN.add(server);
    }
  }
}
