; hale program image v5, entry app.hl

files:
  0 app.hl

types:

consts:
  k0 int 10000000000

prims:

topics:

loci:
  L0 Main slots 0 init f2(Main.init) start f3(Main.on start)

instances:
  I0 Main locus L0 spawn f4(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 fib (fn) params 1 slots 1 frame 3 -> int
  ; r0 n: int
  0000* jge.int.k     r0, 2, @0002                   ; app.hl:3:10
  0001* ret           r0                             ; app.hl:3:16
  0002* add.int.k     r1, r0, -1                     ; app.hl:4:18
  0003  call          r1, f0(fib)                    ; app.hl:4:12
  0004  add.int.k     r2, r0, -2                     ; app.hl:4:31
  0005  call          r2, f0(fib)                    ; app.hl:4:25
  0006  add.int       r1, r1, r2                     ; app.hl:4:23
  0007  ret           r1                             ; app.hl:4:5

func f1 classify (fn) params 2 slots 6 frame 7 -> int
  ; r0 a: int
  ; r1 b: int
  ; r2 lt: bool
  ; r3 le: bool
  ; r4 ne: bool
  ; r5 i: int
  0000* jle.int       r0, r1, @0002                  ; app.hl:8:10
  0001  jge.int.k     r1, 0, @0004                   ; app.hl:8:19
  0002  loadk         r6, k0(10000000000)            ; app.hl:8:32
  0003  jne.int       r0, r6, @0006                  ; app.hl:8:29
  0004* loadint       r6, 1                          ; app.hl:8:53
  0005  ret           r6                             ; app.hl:8:46
  0006* jle.int       r0, r1, @0009                  ; app.hl:9:12
  0007* loadint       r6, 2                          ; app.hl:9:27
  0008  ret           r6                             ; app.hl:9:20
  0009* jle.int.k     r0, 3, @0012                   ; app.hl:10:10
  0010* loadint       r6, 3                          ; app.hl:10:23
  0011  ret           r6                             ; app.hl:10:16
  0012* jeq.int       r0, r1, @0015                  ; app.hl:11:10
  0013* loadint       r6, 4                          ; app.hl:11:24
  0014  ret           r6                             ; app.hl:11:17
  0015* jle.int.k     r0, 5, @0017                   ; app.hl:12:10
  0016  jeq.int.k     r0, 3, @0019                   ; app.hl:12:20
  0017* loadint       r6, 5                          ; app.hl:12:34
  0018  ret           r6                             ; app.hl:12:27
  0019* lt.int        r2, r0, r1                     ; app.hl:13:16
  0020* le.int        r3, r0, r1                     ; app.hl:14:16
  0021* ne.int        r4, r0, r1                     ; app.hl:15:16
  0022* loadint       r5, 0                          ; app.hl:16:13
  0023* jump          @0025                          ; app.hl:17:5
  0024* add.int.k     r5, r5, 1                      ; app.hl:17:20
  0025  jlt.int.k     r5, 10, @0024                  ; app.hl:17:13
  0026* jump          @0029                          ; app.hl:18:5
  0027* loadint       r6, 6                          ; app.hl:18:29
  0028  ret           r6                             ; app.hl:18:22
  0029  jump.t        r2, @0027                      ; app.hl:18:11
  0030  jump.t        r4, @0027                      ; app.hl:18:17
  0031* jump          @0034                          ; app.hl:19:5
  0032* loadint       r6, 7                          ; app.hl:19:28
  0033  ret           r6                             ; app.hl:19:21
  0034  jgt.int.k     r0, 100, @0032                 ; app.hl:19:13
  0035* jne.int.k     r0, 4, @0038                   ; app.hl:20:10
  0036* loadint       r6, 8                          ; app.hl:20:24
  0037  ret           r6                             ; app.hl:20:17
  0038* loadint       r6, 0                          ; app.hl:21:12
  0039  ret           r6                             ; app.hl:21:5

func f2 Main.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:24:7

func f3 Main.on start (start) params 0 slots 0 frame 4
  0000* loadint       r1, 20                         ; app.hl:25:26
  0001  call          r1, f0(fib)                    ; app.hl:25:22
  0002  loadint       r2, 1                          ; app.hl:25:41
  0003  loadint       r3, 2                          ; app.hl:25:44
  0004  call          r2, f1(classify)               ; app.hl:25:32
  0005  add.int       r1, r1, r2                     ; app.hl:25:30
  0006  callb         r0, print, r1                  ; app.hl:25:16
  0007  ret.void                                     ; app.hl:25:5

func f4 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:28:8
