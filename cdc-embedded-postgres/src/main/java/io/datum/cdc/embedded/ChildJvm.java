package io.datum.cdc.embedded;

import java.io.File;

/**
 * The class path of a child JVM that sees the classes this JVM sees, for tests and demos that kill
 * a process (a consumer, a store) and start another: this JVM's class path and module path together
 * ({@code java.class.path} and {@code jdk.module.path}; a test run on the module path keeps its own
 * module there and its test classes on the class path). The child runs on the class path.
 */
public final class ChildJvm {

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
