package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** Runs the fixtures in {@link ExtensionLifecycleFixtures} and checks what the extension did. */
@Tag("postgres")
class EmbeddedPostgresExtensionLifecycleTest {

  @BeforeEach
  void clear() {
    ExtensionLifecycleFixtures.SEEN.clear();
  }

  @Test
  void oneServerPerClassClosedAfterTheClass() {
    TestExecutionSummary summary =
        run(
            ExtensionLifecycleFixtures.Annotated.class,
            ExtensionLifecycleFixtures.Registered.class);
    assertEquals(3, summary.getTestsSucceededCount(), () -> failures(summary));
    var seen = ExtensionLifecycleFixtures.SEEN;
    assertEquals(3, seen.size());
    EmbeddedPostgresServer annotated = seen.get(0);
    assertSame(annotated, seen.get(1));
    EmbeddedPostgresServer registered = seen.get(2);
    assertNotSame(annotated, registered);
    for (EmbeddedPostgresServer server : seen) {
      Path base = server.baseDirectory();
      assertFalse(server.isRunning(), server::toString);
      assertFalse(Files.exists(base), () -> base + " still exists");
      assertThrows(IllegalStateException.class, server::start);
    }
  }

  @Test
  void badAnnotationSettingFailsParameterResolution() {
    TestExecutionSummary summary = run(ExtensionLifecycleFixtures.BadSettings.class);
    assertEquals(1, summary.getTestsFailedCount());
    Throwable failure = summary.getFailures().get(0).getException();
    assertTrue(failure instanceof ParameterResolutionException, failure::toString);
    assertTrue(failure.getMessage().contains("no_equals_sign"), failure::getMessage);
    assertTrue(ExtensionLifecycleFixtures.SEEN.isEmpty());
  }

  private static TestExecutionSummary run(Class<?>... classes) {
    LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
    for (Class<?> c : classes) {
      request.selectors(selectClass(c));
    }
    LauncherDiscoveryRequest built = request.build();
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    LauncherFactory.create().execute(built, listener);
    return listener.getSummary();
  }

  private static String failures(TestExecutionSummary summary) {
    StringBuilder text = new StringBuilder();
    summary
        .getFailures()
        .forEach(
            f ->
                text.append(f.getTestIdentifier().getDisplayName())
                    .append(": ")
                    .append(f.getException())
                    .append('\n'));
    return text.toString();
  }
}
