; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 [int]
  t7 {string: int}

consts:
  k0 string ""
  k1 string "a"

prims:

topics:

loci:
  L0 Main slots 0 init f3(Main.init) start f4(Main.on start)

instances:
  I0 Main locus L0 spawn f5(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 sum (fn) params 1 slots 6 frame 8 -> int
  ; r0 xs: [int]
  ; r1 s: int
  ; r2 $for.list: [int]
  ; r3 $for.idx: int
  ; r5 x: int
  0000* loadint       r1, 0                          ; app.hl:3:13
  0001* move          r6, r0                         ; app.hl:4:14
  0002  iter.list     r6                             ; app.hl:4:5
  0003  jump          @0009
  0004* jge.int.k     r5, 0, @0006                   ; app.hl:5:14
  0005* jump          @0009                          ; app.hl:5:20
  0006* jle.int.k     r5, 100, @0008                 ; app.hl:6:14
  0007* jump          @0010                          ; app.hl:6:22
  0008* add.int       r1, r1, r5                     ; app.hl:7:9
  0009  for.list      r5, r6, @0004                  ; app.hl:4:5
  0010  iter.end      r6
  0011* ret           r1                             ; app.hl:9:5

func f1 find (fn) params 2 slots 15 frame 20 -> string
  ; r0 m: {string: int}
  ; r1 want: int
  ; r2 $for.map: {string: int}
  ; r3 $for.idx: int
  ; r5 k: string
  ; r6 v: int
  ; r7 $for.list: [int]
  ; r8 $for.idx: int
  ; r10 x: int
  ; r11 $for.map: {string: int}
  ; r12 $for.idx: int
  ; r14 k: string
  0000* move          r15, r0                        ; app.hl:13:17
  0001  iter.map      r15                            ; app.hl:13:5
  0002  jump          @0014
  0003  for.map.val   r6, r15
  0004* move          r19, r6                        ; app.hl:14:19
  0005  new.list      r17, r19, 1                    ; app.hl:14:18
  0006  iter.list     r17                            ; app.hl:14:9
  0007  jump          @0012
  0008* jne.int       r10, r1, @0012                 ; app.hl:15:18
  0009* iter.end      r17                            ; app.hl:15:28
  0010  iter.end      r15
  0011  ret           r5
  0012  for.list      r10, r17, @0008                ; app.hl:14:9
  0013  iter.end      r17
  0014  for.map       r5, r15, @0003                 ; app.hl:13:5
  0015  iter.end      r15
  0016* move          r15, r0                        ; app.hl:18:14
  0017  iter.map      r15                            ; app.hl:18:5
  0018  jump          @0021
  0019* iter.end      r15                            ; app.hl:18:18
  0020  ret           r14
  0021  for.map       r14, r15, @0019                ; app.hl:18:5
  0022  iter.end      r15
  0023* loadk         r15, k0("")                    ; app.hl:19:12
  0024  ret           r15                            ; app.hl:19:5

func f2 count (fn) params 1 slots 7 frame 9 -> int
  ; r0 n: int
  ; r1 i: int
  ; r2 c: int
  ; r3 $for.hi: int
  ; r6 j: int
  0000* loadint       r1, 0                          ; app.hl:23:13
  0001* loadint       r2, 0                          ; app.hl:24:13
  0002* jump          @0012                          ; app.hl:25:5
  0003* add.int.k     r1, r1, 1                      ; app.hl:26:9
  0004* loadint       r8, 2                          ; app.hl:27:16
  0005  rem.int       r7, r1, r8                     ; app.hl:27:14
  0006  jne.int.k     r7, 0, @0008                   ; app.hl:27:18
  0007* jump          @0012                          ; app.hl:27:25
  0008* jump          @0011                          ; app.hl:28:9
  0009* add.int.k     r2, r2, 1                      ; app.hl:28:22
  0010* jump          @0012                          ; app.hl:28:30
  0011  jump          @0009                          ; app.hl:28:15
  0012  jlt.int       r1, r0, @0003                  ; app.hl:25:13
  0013* loadint       r6, 0                          ; app.hl:30:14
  0014  move          r7, r0                         ; app.hl:30:17
  0015  jle.int       r7, r6, @0018                  ; app.hl:30:5
  0016* add.int       r2, r2, r6                     ; app.hl:30:21
  0017  loop.range    r6, r7, @0016                  ; app.hl:30:5
  0018* ret           r2                             ; app.hl:31:5

func f3 Main.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:34:7

func f4 Main.on start (start) params 0 slots 0 frame 5
  0000* loadint       r2, 1                          ; app.hl:35:27
  0001  loadint       r3, 2                          ; app.hl:35:30
  0002  loadint       r4, 3                          ; app.hl:35:33
  0003  new.list      r1, r2, 3                      ; app.hl:35:26
  0004  call          r1, f0(sum)                    ; app.hl:35:22
  0005  loadint       r2, 5                          ; app.hl:35:45
  0006  call          r2, f2(count)                  ; app.hl:35:39
  0007  add.int       r1, r1, r2                     ; app.hl:35:37
  0008  callb         r0, print, r1                  ; app.hl:35:16
  0009* loadk         r3, k1("a")                    ; app.hl:35:62
  0010  loadint       r4, 1                          ; app.hl:35:67
  0011  new.map       r1, r3, 1                      ; app.hl:35:61
  0012  loadint       r2, 1                          ; app.hl:35:71
  0013  call          r1, f1(find)                   ; app.hl:35:56
  0014  callb         r0, print, r1                  ; app.hl:35:50
  0015  ret.void                                     ; app.hl:35:5

func f5 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:38:8
