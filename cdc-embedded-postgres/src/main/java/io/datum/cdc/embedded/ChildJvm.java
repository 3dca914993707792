package io.datum.cdc.embedded;

import java.io.File;
import java.util.List;

/**
 * The class path of a child JVM that sees the classes this JVM sees, for tests and demos that kill
 * a process (a consumer, a store) and start another: this JVM's class path and module path together
 * ({@code java.class.path} and {@code jdk.module.path}; a test run on the module path keeps its own
 * module there and its test classes on the class path). The child runs on the class path.
 */
public final class ChildJvm {

  /**
   * JVM options for a short-lived child JVM of a test (a consumer killed a moment later, a store
   * writer, a one-shot command): the C1 compiler only ({@code -XX:TieredStopAtLevel=1}) and the
   * serial collector ({@code -XX:+UseSerialGC}), which spare it the C2 compilations and the G1
   * threads a short run never pays back: about 30% less CPU to start ({@code pgcdc stream} up to
   * its first connection, 0.65 s of CPU with the defaults, 0.46 s with these, on a 2-core CI
   * machine). Not for a child whose throughput or memory use is measured. Unmodifiable.
   */
  public static final List<String> QUICK_START_OPTIONS =
      List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  private ChildJvm() {}

  /**
   * Returns this JVM's class path followed by its module path, as one class path.
   *
   * @return the entries separated by {@link File#pathSeparator}; never null
   */
  public static String classPath() {
    String classPath = System.getProperty("java.class.path", "");
    String modulePath = System.getProperty("jdk.module.path", "");
    if (modulePath.isEmpty()) {
      return classPath;
    }
    return classPath.isEmpty() ? modulePath : classPath + File.pathSeparator + modulePath;
  }
}
