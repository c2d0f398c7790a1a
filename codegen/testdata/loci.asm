; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 topic Tick { n: int, label: string }
  t7 topic Line { text: string }
  t8 {string: int}

consts:
  k0 string " "
  k1 string "tick at "
  k2 string "a"
  k3 string "b"

prims:
  p0 std::io::println id 19 (string) -> void
  p1 std::time::now_ms id 3 () -> int
  p2 std::time::sleep_ms id 5 (int) -> void

topics:
  T0 Tick payload Tick subscribers [0 1]
  T1 Line payload Line subscribers [2]

loci:
  L0 Counter slots 4 init f1(Counter.init) start f2(Counter.on start) budget 1000
    param s0 name: string
    param s1 step: int
    state s2 total: int
    state s3 seen: {string: int}
    on Tick f3(Counter.on Tick)
    fn f4(Counter.bump)
  L1 Clock slots 1 init f5(Clock.init) start f6(Clock.on start)
    state s0 last: int
    on Line f7(Clock.on Line)

instances:
  I0 a locus L0 spawn f8(main) on main consumer 0
  I1 b locus L0 spawn f9(main) on pool("workers") consumer 1
  I2 Clock locus L1 spawn f10(main) on pinned consumer 2

ingress:
  0 stdin to T1 consumer 3

consumers:
  0 main "main" instances [0]
  1 pool "workers" instances [1]
  2 pinned "Clock" instances [2]
  3 ingress "stdin:Line" instances []

func f0 helper (fn) params 1 slots 1 frame 3 -> int
  ; r0 n: int
  0000* loadint       r2, 2                          ; app.hl:5:39
  0001  mul.int       r1, r0, r2                     ; app.hl:5:37
  0002  ret           r1                             ; app.hl:5:28

func f1 Counter.init (init) params 0 slots 0 frame 1
  0000* loadstate     r0, s1(step)                   ; app.hl:9:29
  0001  call          r0, f0(helper)                 ; app.hl:9:22
  0002  storestate    s2(total), r0                  ; app.hl:9:5
  0003* empty.map     r0, string                     ; app.hl:10:31
  0004  storestate    s3(seen), r0                   ; app.hl:10:5
  0005  ret.void                                     ; app.hl:8:7

func f2 Counter.on start (start) params 0 slots 0 frame 2
  0000* loadstate     r0, s1(step)                   ; app.hl:13:14
  0001  call          r0, f4(Counter.bump)           ; app.hl:13:9
  0002* loadstate     r1, s0(name)                   ; app.hl:14:31
  0003  loadstate     r0, s2(total)                  ; app.hl:14:40
  0004  publish       T0(Tick), r0                   ; app.hl:14:9
  0005  ret.void                                     ; app.hl:12:5

func f3 Counter.on Tick (handler) params 1 slots 1 frame 5
  ; r0 t: Tick
  0000* field         r1, r0, 1                      ; app.hl:17:12
  0001  loadstate     r2, s0(name)                   ; app.hl:17:23
  0002  ne.str        r1, r1, r2                     ; app.hl:17:20
  0003  jump.f        r1, @0006
  0004* field         r1, r0, 0                      ; app.hl:17:35
  0005  call          r1, f4(Counter.bump)           ; app.hl:17:30
  0006* loadstate     r2, s0(name)                   ; app.hl:18:15
  0007  loadk         r3, k0(" ")                    ; app.hl:18:22
  0008  concat.str    r2, r2, r3                     ; app.hl:18:20
  0009  loadstate     r4, s2(total)                  ; app.hl:18:32
  0010  callb         r3, str, r4                    ; app.hl:18:28
  0011  concat.str    r2, r2, r3                     ; app.hl:18:26
  0012  callb         r1, print, r2                  ; app.hl:18:9
  0013  ret.void                                     ; app.hl:16:5

func f4 Counter.bump (locus fn) params 1 slots 1 frame 4
  ; r0 by: int
  0000* loadstate     r1, s2(total)                  ; app.hl:11:24
  0001  add.int       r1, r1, r0
  0002  storestate    s2(total), r1
  0003* loadstate     r1, s3(seen)                   ; app.hl:11:37
  0004  loadstate     r2, s0(name)                   ; app.hl:11:42
  0005  loadstate     r3, s2(total)                  ; app.hl:11:50
  0006  setindex.map  r1, r2, r3                     ; app.hl:11:37
  0007  ret.void                                     ; app.hl:11:8

func f5 Clock.init (init) params 0 slots 0 frame 1
  0000* loadint       r0, 0                          ; app.hl:23:21
  0001  storestate    s0(last), r0                   ; app.hl:23:5
  0002  ret.void                                     ; app.hl:22:7

func f6 Clock.on start (start) params 0 slots 0 frame 4
  0000* callprim      r0, p1(std::time::now_ms), r1  ; app.hl:25:16
  0001  storestate    s0(last), r0                   ; app.hl:25:9
  0002* loadint       r1, 10                         ; app.hl:26:29
  0003  callprim      r0, p2(std::time::sleep_ms), r1 ; app.hl:26:9
  0004* loadk         r1, k1("tick at ")             ; app.hl:27:26
  0005  loadstate     r3, s0(last)                   ; app.hl:27:43
  0006  callb         r2, str, r3                    ; app.hl:27:39
  0007  concat.str    r1, r1, r2                     ; app.hl:27:37
  0008  callprim      r0, p0(std::io::println), r1   ; app.hl:27:9
  0009  ret.void                                     ; app.hl:24:5

func f7 Clock.on Line (handler) params 1 slots 1 frame 4
  ; r0 l: Line
  0000* field         r3, r0, 0                      ; app.hl:29:40
  0001  len.str       r1, r3                         ; app.hl:29:36
  0002  field         r2, r0, 0                      ; app.hl:29:56
  0003  publish       T0(Tick), r1                   ; app.hl:29:18
  0004  ret.void                                     ; app.hl:29:5

func f8 main (spawn) params 0 slots 0 frame 1
  0000  loadk         r0, k2("a")                    ; app.hl:33:19
  0001  storestate    s0(name), r0
  0002  loadint       r0, 1                          ; app.hl:33:31
  0003  call          r0, f0(helper)                 ; app.hl:33:24
  0004  storestate    s1(step), r0
  0005  ret.void                                     ; app.hl:33:5

func f9 main (spawn) params 0 slots 0 frame 1
  0000  loadk         r0, k3("b")                    ; app.hl:34:19
  0001  storestate    s0(name), r0
  0002  loadint       r0, 2                          ; app.hl:34:24
  0003  storestate    s1(step), r0
  0004  ret.void                                     ; app.hl:34:5

func f10 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:35:5
