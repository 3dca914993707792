package io.datum.cdc.samples.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The few calls of a Connect worker's REST API the sample makes, as a user makes them with curl.
 */
final class ConnectRest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String url;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /**
   * @param url the worker's REST URL, {@code http://host:port}, without a trailing slash
   */
  ConnectRest(String url) {
    this.url = url;
  }

  /**
   * {@code GET /connector-plugins}: the classes of the connectors the worker found.
   *
   * @return the class names; empty while the worker does not answer yet
   */
  Optional<Set<String>> plugins() {
    try {
      HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(url + "/connector-plugins")));
      if (r.statusCode() != 200) {
        return Optional.empty();
      }
      Set<String> classes = new HashSet<>();
      for (JsonNode plugin : JSON.readTree(r.body())) {
        classes.add(plugin.path("class").asText());
      }
      return Optional.of(classes);
    } catch (IOException notYet) {
      // connection refused while the worker starts
      return Optional.empty();
    }
  }

  /**
   * {@code POST /connectors} with {@code {"name": name, "config": config}}.
   *
   * @param name the connector's name
   * @param config its configuration
   * @return the request's body, for the sample to print
   * @throws IllegalStateException if the worker answers other than 201, with its answer
   * @throws UncheckedIOException if the worker cannot be reached
   */
  String createConnector(String name, Map<String, String> config) {
    String body;
    try {
      body =
          JSON.writerWithDefaultPrettyPrinter()
              .writeValueAsString(Map.of("name", name, "config", config));
      HttpResponse<String> r =
          send(
              HttpRequest.newBuilder(URI.create(url + "/connectors"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body)));
      if (r.statusCode() != 201) {
        throw new IllegalStateException(
            "POST " + url + "/connectors answered " + r.statusCode() + ": " + r.body());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("POST " + url + "/connectors failed", e);
    }
    return body;
  }

  /**
   * {@code GET /connectors/NAME/status}: the connector's state and its task's, {@code "RUNNING"}
   * when both run, {@code "FAILED: trace"} when one failed, else what the worker says (or {@code
   * "UNKNOWN"} while it knows no task yet).
   *
   * @param name the connector's name
   * @return the state; never null
   * @throws UncheckedIOException if the worker cannot be reached
   */
  String state(String name) {
    try {
      HttpResponse<String> r =
          send(HttpRequest.newBuilder(URI.create(url + "/connectors/" + name + "/status")));
      if (r.statusCode() != 200) {
        return "UNKNOWN";
      }
      JsonNode status = JSON.readTree(r.body());
      JsonNode connector = status.path("connector");
      if ("FAILED".equals(connector.path("state").asText())) {
        return "FAILED: " + connector.path("trace").asText();
      }
      JsonNode tasks = status.path("tasks");
      if (tasks.isEmpty()) {
        return "UNKNOWN";
      }
      JsonNode task = tasks.get(0);
      String state = task.path("state").asText();
      return "FAILED".equals(state) ? "FAILED: " + task.path("trace").asText() : state;
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + url + "/connectors/" + name + "/status failed", e);
    }
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws IOException {
    try {
      return http.send(
          request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }
}
