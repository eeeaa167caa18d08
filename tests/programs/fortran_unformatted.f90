! fortran_unformatted.f90 -- a Fortran program's unformatted sequential
! output, which gfortran's runtime writes with write(2): every rank writes R
! records of N doubles to OUTDIR/fort.RANK.dat (each record framed by
! gfortran's 4-byte length markers: 8*N + 8 bytes a record), then reads them
! back.  Record k holds k + j/1000 in its element j.
!
! usage: fortran_unformatted OUTDIR R N
program fortran_unformatted
  use mpi
  implicit none
  integer :: ierr, rank, r, n, k, j, u
  character(len=4096) :: outdir, arg
  double precision, allocatable :: a(:), b(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, outdir)
  call get_command_argument(2, arg)
  read (arg, *) r
  call get_command_argument(3, arg)
  read (arg, *) n
  allocate (a(n), b(n))
  write (arg, '(a, "/fort.", i0, ".dat")') trim(outdir), rank
  open (newunit=u, file=trim(arg), form='unformatted', access='sequential', status='replace')
  do k = 1, r
    do j = 1, n
      a(j) = k + j / 1000.0d0
    end do
    write (u) a
  end do
  close (u)
  open (newunit=u, file=trim(arg), form='unformatted', access='sequential', status='old')
  do k = 1, r
    read (u) b
    do j = 1, n
      if (b(j) /= k + j / 1000.0d0) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end do
  end do
  close (u)
  call MPI_Finalize(ierr)
end program fortran_unformatted
