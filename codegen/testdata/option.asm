; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 enum Result<int> { Ok(int), Err(Error) }
  t7 type Error { kind: string, message: string }
  t8 enum Option<int> { Some(int), None }
  t9 [int]
  t10 enum Result<Result<int>> { Ok(Result<int>), Err(Error) }
  t11 enum Option<Error> { Some(Error), None }

consts:
  k0 enum Result<int>::Err
  k1 string "arg"
  k2 string "odd"
  k3 enum Result<int>::Ok
  k4 enum Option<int>::None
  k5 enum Option<int>::Some
  k6 enum Result<Result<int>>::Err
  k7 enum Result<Result<int>>::Ok
  k8 enum Option<Error>::Some
  k9 enum Option<Error>::None

prims:

topics:

loci:
  L0 Main slots 0 init f4(Main.init) start f5(Main.on start)

instances:
  I0 Main locus L0 spawn f6(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 half (fn) params 1 slots 1 frame 5 -> Result<int>
  ; r0 n: int
  0000* loadint       r2, 2                          ; app.hl:5:12
  0001  rem.int       r1, r0, r2                     ; app.hl:5:10
  0002  jeq.int.k     r1, 0, @0008                   ; app.hl:5:14
  0003* loadk         r3, k1("arg")                  ; app.hl:5:46
  0004  loadk         r4, k2("odd")                  ; app.hl:5:62
  0005  new.struct    r2, r3, t7(Error)              ; app.hl:5:32
  0006  new.enum      r1, r2, k0(Result<int>::Err)   ; app.hl:5:28
  0007  ret           r1                             ; app.hl:5:21
  0008* loadint       r3, 2                          ; app.hl:6:19
  0009  div.int       r2, r0, r3                     ; app.hl:6:17
  0010  new.enum      r1, r2, k3(Result<int>::Ok)    ; app.hl:6:12
  0011  ret           r1                             ; app.hl:6:5

func f1 quarter (fn) params 1 slots 2 frame 4 -> Result<int>
  ; r0 n: int
  ; r1 h: int
  0000* move          r2, r0                         ; app.hl:10:18
  0001  call          r2, f0(half)                   ; app.hl:10:13
  0002  jne.variant   r2, 1, @0006
  0003  enum.field    r3, r2, 0
  0004  new.enum      r3, r3, k0(Result<int>::Err)
  0005  ret           r3
  0006  enum.field    r1, r2, 0
  0007* move          r2, r1                         ; app.hl:11:17
  0008  call          r2, f0(half)                   ; app.hl:11:12
  0009  ret           r2                             ; app.hl:11:5

func f2 first (fn) params 1 slots 6 frame 12 -> Option<int>
  ; r0 xs: [int]
  ; r1 $for.list: [int]
  ; r2 $for.idx: int
  ; r4 x: int
  ; r5 v: int
  0000* move          r6, r0                         ; app.hl:15:14
  0001  iter.list     r6                             ; app.hl:15:5
  0002  jump          @0016
  0003* move          r9, r0                         ; app.hl:16:21
  0004  move          r10, r4                        ; app.hl:16:25
  0005  loadk         r11, k4(Option<int>::None)     ; app.hl:16:17
  0006  callb         r8, get.list, r9
  0007  jne.variant   r8, 1, @0011
  0008  loadk         r9, k4(Option<int>::None)
  0009  iter.end      r6
  0010  ret           r9
  0011  enum.field    r5, r8, 0
  0012* move          r9, r5                         ; app.hl:17:21
  0013  new.enum      r8, r9, k5(Option<int>::Some)  ; app.hl:17:16
  0014  iter.end      r6                             ; app.hl:17:9
  0015  ret           r8
  0016  for.list      r4, r6, @0003                  ; app.hl:15:5
  0017  iter.end      r6
  0018* loadk         r6, k4(Option<int>::None)      ; app.hl:19:12
  0019  ret           r6                             ; app.hl:19:5

func f3 guarded (fn) params 1 slots 2 frame 4 -> Result<int>
  ; r0 n: int
  ; r1 r: Result<int>
  0000* try           r1, k0(Result<int>::Err), @0010 ; app.hl:23:13
  0001  move          r2, r0                         ; app.hl:23:23
  0002  call          r2, f0(half)                   ; app.hl:23:18
  0003  jne.variant   r2, 1, @0008                   ; app.hl:23:17
  0004  enum.field    r3, r2, 0
  0005  new.enum      r3, r3, k0(Result<int>::Err)
  0006  try.drop      1
  0007  ret           r3
  0008  enum.field    r1, r2, 0
  0009  try.end       r1, k3(Result<int>::Ok)        ; app.hl:23:13
  0010* ret           r1                             ; app.hl:24:5

func f4 Main.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:27:7

func f5 Main.on start (start) params 0 slots 0 frame 7
  0000* try           r1, k6(Result<Result<int>>::Err), @0004 ; app.hl:29:15
  0001  loadint       r1, 8                          ; app.hl:29:27
  0002  call          r1, f1(quarter)                ; app.hl:29:19
  0003  try.end       r1, k7(Result<Result<int>>::Ok) ; app.hl:29:15
  0004  callb         r0, print, r1                  ; app.hl:29:9
  0005* try           r0, k8(Option<Error>::Some), @0011 ; app.hl:30:9
  0006  loadint       r1, 10                         ; app.hl:30:19
  0007  loadint       r2, 0                          ; app.hl:30:24
  0008  div.int       r1, r1, r2                     ; app.hl:30:22
  0009  callb         r0, print, r1                  ; app.hl:30:13
  0010  try.end       r0, k9(Option<Error>::None)    ; app.hl:30:9
  0011* loadint       r5, 1                          ; app.hl:31:32
  0012  loadint       r6, 2                          ; app.hl:31:35
  0013  new.list      r4, r5, 2                      ; app.hl:31:31
  0014  call          r4, f2(first)                  ; app.hl:31:25
  0015  move          r2, r4
  0016  loadint       r3, 0                          ; app.hl:31:40
  0017  callb         r1, unwrap_or, r2              ; app.hl:31:15
  0018  callb         r0, print, r1                  ; app.hl:31:9
  0019* loadint       r1, 3                          ; app.hl:32:23
  0020  call          r1, f3(guarded)                ; app.hl:32:15
  0021  callb         r0, print, r1                  ; app.hl:32:9
  0022  ret.void                                     ; app.hl:28:5

func f6 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:36:8
