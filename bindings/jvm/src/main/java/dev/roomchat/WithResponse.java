package dev.roomchat;

/**
 * An operation's typed answer beside the answer it came from: what each
 * {@code ...WithResponse} method returns ({@code client.listUsersWithResponse(params)}).
 * A call that fails throws as the plain method does.
 *
 * @param <T> the operation's record
 * @param data the record the plain method returns
 * @param response the status, headers, attempts, request id and JSON body of the answer
 */
public record WithResponse<T>(T data, Response response) {}
