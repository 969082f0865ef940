package dev.roomchat;

import dev.roomchat.internal.Native;
import java.lang.ref.Cleaner;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Every record of a listing, fetched a page at a time as the loop asks
 * (core's paging rules). Each {@link #iterator()} starts from the beginning.
 * It never ends early without throwing: a page that fails throws its
 * {@link RoomchatException} from {@code hasNext()}, and asking again fetches
 * the same page again. A {@link #stream()} should be closed when left
 * early (try-with-resources); an iterator left early is freed by a
 * {@link Cleaner}.
 *
 * @param <T> the listing's record
 */
public final class Listing<T> implements Iterable<T> {
  private final RoomchatClient client;
  private final String operation;
  private final Map<String, Object> params;
  private final CallOptions options;
  private final Function<Object, ?> decodePage;
  private final Function<Object, List<T>> items;

  @SuppressWarnings("unchecked")
  <P> Listing(RoomchatClient client, String operation, Map<String, Object> params, CallOptions options, Function<Object, P> decodePage, Function<P, List<T>> items) {
    this.client = client;
    this.operation = operation;
    this.params = params;
    this.options = options;
    this.decodePage = decodePage;
    this.items = page -> items.apply((P) page);
  }

  @Override
  public Iterator<T> iterator() {
    return new Pages();
  }

  /** The records as a lazy sequential stream; close it when left early. */
  public Stream<T> stream() {
    Pages pages = new Pages();
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(pages, Spliterator.ORDERED | Spliterator.NONNULL), false).onClose(pages::close);
  }

  /** The library's iterator, freed once. */
  private static final class Handle implements Runnable {
    private long ptr;

    Handle(long ptr) {
      this.ptr = ptr;
    }

    @Override
    public synchronized void run() {
      if (ptr != 0) {
        Native.roomchat_operation_pages_free(ptr);
        ptr = 0;
      }
    }

    synchronized long ptr() {
      return ptr;
    }
  }

  private final class Pages implements Iterator<T>, AutoCloseable {
    private final ArrayDeque<T> buffer = new ArrayDeque<>();
    private Handle handle;
    private Cleaner.Cleanable cleanable;
    private boolean done;

    @Override
    public boolean hasNext() {
      while (buffer.isEmpty()) {
        if (done) {
          return false;
        }
        if (handle == null) {
          handle = new Handle(client.openPages(operation, params, options));
          cleanable = RoomchatClient.cleaner().register(this, handle);
        }
        String page;
        // The fetch holds the handle: a close() on another thread (a stream's)
        // waits for it rather than freeing the library's iterator under it.
        synchronized (handle) {
          long ptr = handle.ptr();
          if (ptr == 0) {
            throw RoomchatException.of(ErrorKind.CONFIGURATION, "the listing was closed");
          }
          page = client.nextPage(operation, ptr);
        }
        if (page == null) {
          close();
          return false;
        }
        Object decoded = Bridge.decode(operation, page, decodePage);
        List<T> records = items.apply(decoded);
        if (records != null) {
          buffer.addAll(records);
        }
      }
      return true;
    }

    @Override
    public T next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return buffer.poll();
    }

    @Override
    public void close() {
      done = true;
      if (cleanable != null) {
        cleanable.clean();
      }
    }
  }
}
