package io.datum.cdc.cli.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Where a command's password comes from: a file or the environment, never the command line. */
class ServerOptionsTest {

  @Command(name = "probe")
  static final class Probe {
    @Mixin ServerOptions server;
  }

  private static ServerOptions parse(String... args) {
    Probe probe = new Probe();
    new CommandLine(probe).parseArgs(args);
    return probe.server;
  }

  @Test
  void thePasswordFileGivesItsFirstLine(@TempDir Path dir) throws Exception {
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "s3cr=t&x\r\nsecond line\n");
    ServerOptions s =
        parse(
            "--url",
            "jdbc:postgresql://h/db",
            "--user",
            "cdc",
            "--password-file",
            secret.toString());
    assertEquals("s3cr=t&x", s.password());
    assertEquals("s3cr=t&x", s.properties().getProperty("password"));
    assertNull(parse("--url", "jdbc:postgresql://h/db").password());
  }

  @Test
  void aMissingFileOrBothSourcesAreRefused(@TempDir Path dir) {
    CdcConfigurationException missing =
        assertThrows(
            CdcConfigurationException.class,
            () ->
                parse(
                        "--url",
                        "jdbc:postgresql://h/db",
                        "--password-file",
                        dir.resolve("no").toString())
                    .password());
    assertTrue(missing.getMessage().startsWith("--password-file "), missing.getMessage());
    CdcConfigurationException both =
        assertThrows(
            CdcConfigurationException.class,
            () ->
                parse(
                        "--url",
                        "jdbc:postgresql://h/db",
                        "--password-file",
                        dir.resolve("x").toString(),
                        "--password-env",
                        "HOME")
                    .password());
    assertTrue(both.getMessage().contains("exclude each other"), both.getMessage());
  }

  @Test
  void anEmptyFirstLineIsRefusedNamingTheFile(@TempDir Path dir) throws Exception {
    for (String content : new String[] {"", "\n", "\r\nsecret\n"}) {
      Path secret = dir.resolve("secret");
      Files.writeString(secret, content);
      CdcConfigurationException empty =
          assertThrows(
              CdcConfigurationException.class,
              () ->
                  parse("--url", "jdbc:postgresql://h/db", "--password-file", secret.toString())
                      .password());
      assertTrue(
          empty
              .getMessage()
              .equals(
                  "--password-file "
                      + secret
                      + ": its first line, the password,"
                      + " is empty"
                      + (content.isEmpty() ? " (the file is empty)" : "")),
          empty.getMessage());
    }
  }
}
