package dev.roomchat;

import dev.roomchat.testing.RoomchatEmulator;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Arrays;

/**
 * What the telemetry costs a call, printed side by side, never asserted: one
 * {@code list_users} of 50 users to the emulator, one at a time, through a
 * client with the global OpenTelemetry unset (the observer attached, nothing
 * bound), one given {@code OpenTelemetry.noop()}, and one given an SDK (a
 * batch span processor over an exporter that drops, a meter provider with a
 * reader), rounds interleaved, the median of each.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp target/classes:target/test-classes:$(cat cp.txt) dev.roomchat.TelemetryCost</pre>
 */
public final class TelemetryCost {
  private TelemetryCost() {}

  public static void main(String[] args) {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 400;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    try (RoomchatEmulator emulator = RoomchatEmulator.start()) {
      emulator.seedUsers(50);
      OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
          .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(BatchSpanProcessor.builder(SpanExporter.composite()).build()).build())
          .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(InMemoryMetricReader.create()).build())
          .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
          .build();
      String[] names = {"global unset", "OpenTelemetry.noop()", "SDK"};
      try (RoomchatClient unset = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).build();
          RoomchatClient noop = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).openTelemetry(OpenTelemetry.noop()).build();
          RoomchatClient traced = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).openTelemetry(sdk).build()) {
        emulator.setRateLimit(1_000_000, java.time.Duration.ofMinutes(1));
        RoomchatClient[] clients = {unset, noop, traced};
        ListUsersParams fifty = ListUsersParams.builder().limit(50).build();
        for (RoomchatClient c : clients) {
          for (int i = 0; i < 200; i++) {
            c.listUsers(fifty); // warm-up
          }
        }
        double[][] perCall = new double[clients.length][rounds];
        for (int r = 0; r < rounds; r++) {
          for (int k = 0; k < clients.length; k++) {
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
              clients[k].listUsers(fifty);
            }
            perCall[k][r] = (System.nanoTime() - start) / 1e3 / calls;
          }
        }
        StringBuilder line = new StringBuilder("[measure] list_users(50), one at a time, median µs per call of " + rounds + " rounds of " + calls + ":");
        for (int k = 0; k < clients.length; k++) {
          Arrays.sort(perCall[k]);
          line.append(String.format(" %s %.1f;", names[k], perCall[k][rounds / 2]));
        }
        System.out.println(line.substring(0, line.length() - 1));
      } finally {
        sdk.close();
      }
    }
  }
}
