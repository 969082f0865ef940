package dev.roomchat.testing;

import dev.roomchat.RoomchatClient;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that starts one emulator per test class (stopped after
 * it), resets it before each test, and hands a test method (or constructor,
 * or lifecycle method) a {@link RoomchatClient} for it and the
 * {@link RoomchatEmulator} itself (its admin API and journal).
 *
 * <pre>{@code
 * @ExtendWith(RoomchatExtension.class)
 * class RoomsTest {
 *   @Test
 *   void createsARoom(RoomchatClient client, RoomchatEmulator emulator) {
 *     RoomAnswer created = client.createChatRoom(CreateChatRoomParams.builder().name("Webinar").build());
 *     assertEquals("POST", emulator.journal().get(0).method());
 *   }
 * }
 * }</pre>
 */
public final class RoomchatExtension implements BeforeEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RoomchatExtension.class);

  /** What the class's store closes when the class is done. */
  private static final class Running implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    final RoomchatEmulator emulator = RoomchatEmulator.start();
    final RoomchatClient client = emulator.clientBuilder().build();

    @Override
    public void close() {
      client.close();
      emulator.close();
    }
  }

  private static Running running(ExtensionContext context) {
    ExtensionContext classContext = context;
    while (classContext.getTestMethod().isPresent() && classContext.getParent().isPresent()) {
      classContext = classContext.getParent().get();
    }
    return classContext.getStore(NAMESPACE).getOrComputeIfAbsent(Running.class, k -> new Running(), Running.class);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    running(context).emulator.reset();
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == RoomchatClient.class || type == RoomchatEmulator.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Running r = running(context);
    return parameter.getParameter().getType() == RoomchatClient.class ? r.client : r.emulator;
  }
}
