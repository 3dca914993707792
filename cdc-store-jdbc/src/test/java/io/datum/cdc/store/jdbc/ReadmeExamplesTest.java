package io.datum.cdc.store.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's Java examples compile as printed, against this module's test class path (cdc-api,
 * cdc-core, cdc-store-jdbc): each {@code ```java} block, its {@code import} lines kept as they are
 * and its statements put in a method of a class of its own. What the README leaves to the reader is
 * supplied here and nowhere else: a declaration written {@code = ...;} (the reader's own value)
 * gets {@code null}, and the few names a block uses without declaring them (the reader's own
 * objects, {@link #PLACEHOLDERS}) are fields of that class. Nothing else is added: a missing
 * import, a wrong package or a changed signature fails the test with javac's message.
 */
class ReadmeExamplesTest {

  private static final Path README = Path.of("..", "README.md");

  /** The reader's own objects the README uses undeclared, and a type that has what it calls. */
  private static final Map<String, String> PLACEHOLDERS =
      Map.of(
          "outbox",
          "interface Outbox { void send(Object table, java.util.Map<String, Object> row); }\n"
              + "  Outbox outbox;");

  private static final Pattern BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

  @Test
  void everyJavaBlockOfTheReadmeCompiles(@TempDir Path dir) throws IOException {
    List<String> blocks = new ArrayList<>();
    Matcher m = BLOCK.matcher(Files.readString(README, StandardCharsets.UTF_8));
    while (m.find()) {
      blocks.add(m.group(1));
    }
    assertEquals(2, blocks.size(), "the README's java blocks (a new one: check it is compiled)");
    List<String> unused = new ArrayList<>(PLACEHOLDERS.keySet());
    for (int i = 0; i < blocks.size(); i++) {
      String block = blocks.get(i);
      unused.removeIf(name -> Pattern.compile("\\b" + name + "\\b").matcher(block).find());
      String source = asClass("ReadmeBlock" + (i + 1), block);
      String errors = compile("ReadmeBlock" + (i + 1), source, dir);
      assertTrue(
          errors.isEmpty(),
          "README.md's java block " + (i + 1) + " does not compile:\n" + errors + "\n" + source);
    }
    assertEquals(List.of(), unused, "placeholders no block uses any more");
  }

  /** The block's imports, then a class whose method holds its statements. */
  private static String asClass(String name, String block) {
    StringBuilder imports = new StringBuilder();
    StringBuilder body = new StringBuilder();
    for (String line : block.split("\n", -1)) {
      (line.startsWith("import ") ? imports : body).append(line).append('\n');
    }
    StringBuilder c = new StringBuilder(imports).append("\nclass ").append(name).append(" {\n");
    for (String placeholder : PLACEHOLDERS.values()) {
      c.append("  ").append(placeholder).append('\n');
    }
    c.append("  void run() throws Exception {\n")
        // "DataSource db = ...;": the reader's own value
        .append(body.toString().replaceAll("= \\.\\.\\.;", "= null;"))
        .append("  }\n}\n");
    return c.toString();
  }

  /**
   * Compiles one source file with the JDK's javac (through {@code java.util.spi.ToolProvider}, as
   * this module's tests are compiled in its named module, which does not read {@code
   * java.compiler}); returns javac's errors, empty if it compiled.
   */
  private static String compile(String name, String source, Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve(name + ".java"), source, StandardCharsets.UTF_8);
    // surefire's class path (its manifest-only jar leaves java.class.path with one jar)
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    StringWriter errors = new StringWriter();
    int status =
        ToolProvider.findFirst("javac")
            .orElseThrow(() -> new AssertionError("no javac in this JDK (a JRE runs the tests?)"))
            .run(
                new PrintWriter(errors),
                new PrintWriter(errors),
                "-classpath",
                classPath,
                "-d",
                dir.resolve("classes").toString(),
                "-proc:none",
                "-Xlint:none",
                file.toString());
    return status == 0 ? "" : errors.toString();
  }
}
