#!/usr/bin/env escript
%%! +sbwt none +sbwtdcpu none +sbwtdio none
%% savina.erl: the Savina actor benchmarks of ../pingpong.hl,
%% ../counting.hl, ../threadring.hl and ../forkjoin.hl in Erlang/OTP,
%% one process per actor and the same message counts, for comparison:
%%
%%     escript savina.erl pingpong|counting|threadring|forkjoin|empty [REPEATS]
%%
%% It prints the same line as the Hale program, once per repeat.
%% BenchmarkSavina runs it when escript is installed (Debian: erlang-nox).
%% The emulator flags (line 2, where escript reads them) keep idle
%% schedulers from busy-waiting, which would count as CPU time that does
%% no work.
-mode(compile).

-define(PINGPONG_N, 40000).
-define(COUNTING_N, 200000).
-define(RING_SIZE, 100).
-define(RING_HOPS, 200000).
-define(FORK_WORKERS, 60).
-define(FORK_MSGS, 3000).

main([Name]) -> main([Name, "1"]);
main([Name, Repeats]) ->
    Run = case Name of
        "pingpong" -> fun pingpong/0;
        "counting" -> fun counting/0;
        "threadring" -> fun threadring/0;
        "forkjoin" -> fun forkjoin/0;
        "empty" -> fun() -> ok end;
        _ -> usage()
    end,
    [Run() || _ <- lists:seq(1, list_to_integer(Repeats))],
    ok;
main(_) -> usage().

usage() ->
    io:format(standard_error, "usage: savina.erl pingpong|counting|threadring|forkjoin|empty [REPEATS]~n", []),
    halt(2).

%% PingPong: the pinger sends {ping, N}, the ponger answers {pong, N}.
pingpong() ->
    Pong = spawn_link(fun ponger/0),
    pinger(Pong, 1).

pinger(Pong, N) ->
    Pong ! {ping, self(), N},
    receive
        {pong, N} when N < ?PINGPONG_N -> pinger(Pong, N + 1);
        {pong, N} -> Pong ! stop, io:format("pingpong ~b~n", [2 * N])
    end.

ponger() ->
    receive
        {ping, From, N} -> From ! {pong, N}, ponger();
        stop -> ok
    end.

%% Counting: N increments to a counter process, then a retrieve.
counting() ->
    Counter = spawn_link(fun() -> counter(0) end),
    send_incrs(Counter, ?COUNTING_N),
    Counter ! {retrieve, self()},
    receive {total, Count} -> io:format("counted ~b~n", [Count]) end.

send_incrs(_, 0) -> ok;
send_incrs(Counter, N) -> Counter ! {incr, 1}, send_incrs(Counter, N - 1).

counter(Count) ->
    receive
        {incr, By} -> counter(Count + By);
        {retrieve, From} -> From ! {total, Count}
    end.

%% ThreadRing: RING_SIZE processes pass a token carrying the hops left;
%% node 0 sends it to node 1, as in the Hale program.
threadring() ->
    Self = self(),
    Nodes = [spawn_link(fun() -> ring_node(Id, Self) end) || Id <- lists:seq(0, ?RING_SIZE - 1)],
    Nexts = tl(Nodes) ++ [hd(Nodes)],
    [Node ! {next, Next} || {Node, Next} <- lists:zip(Nodes, Nexts)],
    hd(Nexts) ! {token, ?RING_HOPS},
    receive {ring, Id} -> io:format("ring done at node ~b~n", [Id]) end,
    [Node ! stop || Node <- Nodes],
    ok.

ring_node(Id, Main) ->
    receive {next, Next} -> ring_loop(Id, Next, Main) end.

ring_loop(Id, Next, Main) ->
    receive
        {token, 1} -> Main ! {ring, Id}, ring_loop(Id, Next, Main);
        {token, Left} -> Next ! {token, Left - 1}, ring_loop(Id, Next, Main);
        stop -> ok
    end.

%% Fork-Join throughput: every job goes to every worker, which computes
%% sin(Theta) squared; each reports when it has seen them all.
forkjoin() ->
    Self = self(),
    Workers = [spawn_link(fun() -> fj_worker(Self, 0, 0.0) end) || _ <- lists:seq(1, ?FORK_WORKERS)],
    fj_send(Workers, ?FORK_MSGS),
    fj_wait(?FORK_WORKERS),
    io:format("forkjoin ~b~n", [?FORK_WORKERS * ?FORK_MSGS]).

fj_send(_, 0) -> ok;
fj_send(Workers, N) ->
    [W ! {job, 37.2} || W <- Workers],
    fj_send(Workers, N - 1).

fj_wait(0) -> ok;
fj_wait(N) -> receive {done, _Sum} -> fj_wait(N - 1) end.

fj_worker(Main, ?FORK_MSGS, Sum) -> Main ! {done, Sum};
fj_worker(Main, Seen, Sum) ->
    receive
        {job, Theta} ->
            S = math:sin(Theta),
            R = S * S,
            case R =< 0.0 of
                true -> error(unexpected_result);
                false -> fj_worker(Main, Seen + 1, Sum + R)
            end
    end.
